export declare const XVFB_SCREEN: string;
export declare function electronCommand(options: {
  electron: string;
  args: string[];
  platform: string;
  env: Record<string, string | undefined>;
  uid?: number;
}): { command: string; args: string[] };
