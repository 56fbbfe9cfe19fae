export declare const ELECTRON_MISSING: string;
export declare function electronPackageDir(resolve?: (id: string) => string): string | null;
