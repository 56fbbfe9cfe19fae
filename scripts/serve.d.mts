export declare const SERVE_SOURCES: string[];
export declare const SERVE_OUTPUTS: string[];
export declare function newestMtime(entry: string): number;
export declare function staleBuildReason(options: { root: string; sources?: string[]; outputs?: string[] }): string | null;
