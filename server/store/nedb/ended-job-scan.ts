const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const ZERO = 0x30;
const NINE = 0x39;

const key = (name: string) => Buffer.from(name, 'latin1');
const KEY_ID = key('_id');
const KEY_STATUS = key('status');
const KEY_CREATED = key('created_at');
const KEY_EXPIRED = key('expired');
const KEY_IMAGE = key('image_file');
const KEY_DELETED = key('$$deleted');
const COMPLETED = key('completed');
const FAILED = key('failed');
const TRUE = key('true');

/** An ended job's line read by scanOldLine. */
export interface OldLine {
  id: string;
  image: string | null;
  hasFiles: boolean;
}

/**
 * Reads a line as an ended job created before `cutoff` from its bytes alone: the top-level
 * `_id`, `status`, `created_at`, `expired` and `image_file`, found by following the nesting of
 * the JSON without building it. True only when it is sure (a well-nested object written as NeDB
 * writes it, plain strings and an integer time); anything else is left to JSON.parse.
 */
export function scanOldLine(buf: Buffer, start: number, end: number, cutoff: number, out: OldLine): boolean {
  if (buf[start] !== OPEN_BRACE || buf[end - 1] !== CLOSE_BRACE) return false;
  let depth = 0;
  let idStart = -1;
  let idEnd = -1;
  let ended = false;
  let created = NaN;
  let expired = false;
  let imageStart = -1;
  let imageEnd = -1;
  let i = start;
  while (i < end) {
    const c = buf[i];
    if (c === QUOTE) {
      const from = ++i;
      let escaped = false;
      while (i < end) {
        const d = buf[i];
        if (d === QUOTE) break;
        if (d === BACKSLASH) {
          escaped = true;
          i += 2;
        } else {
          i++;
        }
      }
      if (i >= end) return false;
      const to = i++;
      if (depth !== 1 || buf[i] !== COLON) continue;
      // A key of the top-level object; its value starts after the colon.
      if (escaped) return false;
      const value = i + 1;
      if (is(buf, from, to, KEY_ID)) {
        const close = plainString(buf, value, end);
        if (close < 0) return false;
        idStart = value + 1;
        idEnd = close;
      } else if (is(buf, from, to, KEY_STATUS)) {
        const close = plainString(buf, value, end);
        if (close < 0) return false;
        ended = is(buf, value + 1, close, COMPLETED) || is(buf, value + 1, close, FAILED);
      } else if (is(buf, from, to, KEY_CREATED)) {
        created = integer(buf, value, end);
        if (Number.isNaN(created)) return false;
      } else if (is(buf, from, to, KEY_EXPIRED)) {
        expired = is(buf, value, Math.min(value + 4, end), TRUE) && (buf[value + 4] === COMMA || buf[value + 4] === CLOSE_BRACE);
      } else if (is(buf, from, to, KEY_IMAGE)) {
        if (buf[value] === QUOTE) {
          imageEnd = plainString(buf, value, end);
          if (imageEnd < 0) return false;
          imageStart = value + 1;
        } else {
          imageStart = imageEnd = -1;
        }
      } else if (is(buf, from, to, KEY_DELETED)) {
        return false;
      }
      continue;
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && --depth === 0 && i !== end - 1) return false;
    i++;
  }
  if (depth !== 0 || idEnd <= idStart || !ended || !(created < cutoff)) return false;
  out.id = buf.toString('utf8', idStart, idEnd);
  out.hasFiles = !expired;
  out.image = out.hasFiles && imageStart >= 0 ? buf.toString('utf8', imageStart, imageEnd) : null;
  return true;
}

function is(buf: Buffer, from: number, to: number, bytes: Buffer): boolean {
  if (to - from !== bytes.length) return false;
  for (let i = 0; i < bytes.length; i++) if (buf[from + i] !== bytes[i]) return false;
  return true;
}

/** The position of the closing quote of the string starting at `at`, or -1 when there is none or it has escapes. */
function plainString(buf: Buffer, at: number, end: number): number {
  if (buf[at] !== QUOTE) return -1;
  for (let i = at + 1; i < end; i++) {
    const c = buf[i];
    if (c === QUOTE) return i;
    if (c === BACKSLASH) return -1;
  }
  return -1;
}

/** The non-negative integer starting at `at` and ending at a comma or brace; NaN for any other value. */
function integer(buf: Buffer, at: number, end: number): number {
  let n = 0;
  let i = at;
  for (; i < end; i++) {
    const c = buf[i];
    if (c < ZERO || c > NINE) break;
    n = n * 10 + (c - ZERO);
  }
  return i > at && i - at <= 15 && (buf[i] === COMMA || buf[i] === CLOSE_BRACE) ? n : NaN;
}
