export declare function buildMain(options: {
  resolve?: (id: string) => string;
  compile: () => number;
  log: (line: string) => void;
}): number;
