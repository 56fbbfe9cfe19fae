// What `extract` may ask for, and the bounds of what it returns (extract.ts); no Node imports,
// so the schemas and the panel may use them.

export const EXTRACT_KINDS = ['markdown', 'text', 'metadata', 'links'] as const;
export type ExtractKind = (typeof EXTRACT_KINDS)[number];

/** Most links kept; a page with more says `links_truncated`. */
export const MAX_LINKS = 5000;
/** Longest string kept in metadata and links (characters); longer ones are cut. */
export const MAX_EXTRACT_STRING = 2048;
/** Most entries kept in each metadata list or map (Open Graph, Twitter, icons, feeds). */
export const MAX_METADATA_ITEMS = 50;
/** Longest Markdown or text kept, bytes of UTF-8; longer ones are cut. */
export const MAX_CONTENT_BYTES = 5 * 1024 * 1024;
