import { setImmediate as nextTurn } from 'node:timers/promises';

// The text of a stored page source (the serialized DOM), for a reader when the in-page
// extraction failed. A page is hostile input, so this is one forward pass with no regular
// expression: every search moves on from where the last one ended, which keeps it linear in
// the input however the markup is nested or left open, and it hands the event loop back
// between slices of the input.

/** How much of the text to give, and how much of the document to read for it. */
export interface HtmlTextBounds {
  /** Characters of text returned at most; reading stops once they are reached. */
  maxChars: number;
  /** Characters of the document read at most; what lies past them is not looked at. */
  maxInputChars: number;
}

export interface HtmlText {
  text: string;
  /** The text went on past `maxChars`, or the document past `maxInputChars`. */
  truncated: boolean;
}

/** Characters of input read between two turns of the event loop (~1 ms of work). */
const SLICE_CHARS = 64 * 1024;

/** Elements whose content is not markup (the serializer writes it unescaped) and is not shown. */
const RAW_HIDDEN = new Set(['script', 'style', 'noscript', 'noembed', 'noframes', 'iframe']);
/** Elements whose content is markup that is not read as text of the page. */
const TREE_HIDDEN = new Set(['head', 'template', 'svg']);
/** End tags (and `br`) that end a line of the text. */
const LINE_ENDS = new Set(['br', 'p', 'div', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'li', 'tr', 'section', 'article', 'pre', 'blockquote']);
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };
/** The longest tag name told apart (`blockquote` is the longest looked for). */
const MAX_TAG_NAME = 16;
/** Attribute values read in one tag at most (a page's own tags hold a few dozen). */
const MAX_VALUES = 1024;
/** The longest entity name or number looked at after `&`. */
const MAX_ENTITY = 32;

const LT = 0x3c;
const GT = 0x3e;
const AMP = 0x26;
const SLASH = 0x2f;
const NEWLINE = 0x0a;

const isLetter = (c: number) => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHexDigit = (c: number) => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
/** Space, tab, form feed, vertical tab, carriage return: a space of the text. */
const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0c || c === 0x0b || c === 0x0d;
const isNameEnd = (c: number) => isSpace(c) || c === NEWLINE || c === SLASH || c === GT;

/** The text, built with runs of white space collapsed: to a line break when one holds a newline, else a space. */
class TextBuilder {
  private readonly parts: string[] = [];
  private length = 0;
  /** 0: nothing pending; 1: a space; 2: a line break. */
  private pending = 0;

  constructor(private readonly max: number) {}

  get full(): boolean {
    return this.length > this.max;
  }

  space(lineBreak: boolean): void {
    this.pending = Math.max(this.pending, lineBreak ? 2 : 1);
  }

  add(text: string): void {
    if (!text) return;
    // White space before the first word and after the last is dropped, as by trim().
    if (this.pending && this.length) this.push(this.pending === 2 ? '\n' : ' ');
    this.pending = 0;
    this.push(text);
  }

  /** A character decoded from an entity, which may itself be white space. */
  addChar(char: string): void {
    const c = char.charCodeAt(0);
    if (char.length === 1 && (isSpace(c) || c === NEWLINE)) this.space(c === NEWLINE);
    else this.add(char);
  }

  result(inputCut: boolean): HtmlText {
    const text = this.parts.join('');
    // trim() also drops the white space beyond ASCII (U+3000, U+00A0) the runs kept as words.
    return { text: text.slice(0, this.max).trim(), truncated: inputCut || text.length > this.max };
  }

  private push(text: string) {
    this.parts.push(text);
    this.length += text.length;
  }
}

/** One pass over the document; `read` moves `pos` forward only. */
class HtmlTextScanner {
  private pos = 0;
  /** How many hidden elements (head, template, svg) are open around `pos`. */
  private hidden = 0;
  /** The next `>` and `=` at or after where they were last looked for (tagEnd). */
  private nextGt = -1;
  private nextEquals = -1;
  private readonly out: TextBuilder;

  constructor(
    private readonly html: string,
    private readonly end: number,
    maxChars: number,
  ) {
    this.out = new TextBuilder(maxChars);
  }

  get done(): boolean {
    return this.pos >= this.end || this.out.full;
  }

  /** Reads on for about `chars` characters (a tag or comment is read whole), or until the text is full. */
  read(chars: number): void {
    const until = this.pos + chars;
    while (this.pos < until && !this.done) {
      if (this.html.charCodeAt(this.pos) === LT) this.markup();
      else this.text(until);
    }
  }

  result(): HtmlText {
    return this.out.result(this.end < this.html.length);
  }

  /** Text up to the next `<` or `until`: words added, white space collapsed, entities decoded. */
  private text(until: number) {
    const { html } = this;
    let run = this.pos;
    let i = this.pos;
    const flush = () => {
      if (!this.hidden) this.out.add(html.slice(run, i));
    };
    for (; i < until && i < this.end; ) {
      const c = html.charCodeAt(i);
      if (c === LT) break;
      if (isSpace(c) || c === NEWLINE) {
        flush();
        if (!this.hidden) this.out.space(c === NEWLINE);
        run = ++i;
      } else if (c === AMP) {
        flush();
        const entity = this.entity(i);
        if (!this.hidden) this.out.addChar(entity.char);
        run = i = entity.next;
      } else {
        i++;
      }
    }
    flush();
    this.pos = i;
  }

  /** The character an entity at `at` stands for and where the text goes on; a lone `&` is itself. */
  private entity(at: number): { char: string; next: number } {
    const { html } = this;
    const limit = Math.min(this.end, at + 2 + MAX_ENTITY);
    const literal = { char: '&', next: at + 1 };
    let i = at + 1;
    if (html.charCodeAt(i) === 0x23) {
      const hex = (html.charCodeAt(i + 1) | 0x20) === 0x78;
      i += hex ? 2 : 1;
      const start = i;
      while (i < limit && (hex ? isHexDigit : isDigit)(html.charCodeAt(i))) i++;
      if (i === start || html.charCodeAt(i) !== 0x3b) return literal;
      const code = parseInt(html.slice(start, i), hex ? 16 : 10);
      return code > 0 && code <= 0x10ffff ? { char: String.fromCodePoint(code), next: i + 1 } : literal;
    }
    while (i < limit && isLetter(html.charCodeAt(i))) i++;
    if (i === at + 1 || html.charCodeAt(i) !== 0x3b) return literal;
    const char = ENTITIES[html.slice(at + 1, i).toLowerCase()];
    return char === undefined ? literal : { char, next: i + 1 };
  }

  /** A tag, comment or declaration at `<`, or a `<` that is only text. */
  private markup() {
    const { html, pos } = this;
    const next = html.charCodeAt(pos + 1);
    if (html.startsWith('<!--', pos)) {
      this.pos = this.after('-->', pos + 4);
      this.out.space(false);
    } else if (next === 0x21 || next === 0x3f) {
      // <!doctype …>, <![CDATA[…]]>, <?…>: declarations, read to their `>`.
      this.pos = this.after('>', pos + 2);
      this.out.space(false);
    } else if (next === SLASH && isLetter(html.charCodeAt(pos + 2))) {
      this.endTag();
    } else if (isLetter(next)) {
      this.startTag();
    } else {
      if (!this.hidden) this.out.add('<');
      this.pos = pos + 1;
    }
  }

  private startTag() {
    const name = this.tagName(this.pos + 1);
    const { end, selfClosing } = this.tagEnd(this.pos + 1 + name.length);
    this.pos = end;
    if (RAW_HIDDEN.has(name) && !selfClosing) this.pos = this.closing(name);
    else if (TREE_HIDDEN.has(name) && !selfClosing) this.hidden++;
    this.out.space(name === 'br' && !this.hidden);
  }

  private endTag() {
    const name = this.tagName(this.pos + 2);
    this.pos = this.tagEnd(this.pos + 2 + name.length).end;
    if (TREE_HIDDEN.has(name) && this.hidden) this.hidden--;
    this.out.space(LINE_ENDS.has(name) && !this.hidden);
  }

  /**
   * The lower-cased name of a tag starting at `at`. Only the first characters of a long name are
   * kept: no name looked for is longer, and the rest is read as the tag's attributes.
   */
  private tagName(at: number): string {
    const limit = Math.min(this.end, at + MAX_TAG_NAME);
    let i = at;
    while (i < limit && !isNameEnd(this.html.charCodeAt(i))) i++;
    return this.html.slice(at, i).toLowerCase();
  }

  /**
   * Past the `>` ending a tag whose attributes start at `at`; a quoted value may hold `>`. The next
   * `>` and `=` are remembered, so no stretch of the input is searched twice for either. Past
   * `MAX_VALUES` values a tag ends at its next `>`, so one tag is never a long stretch of work.
   */
  private tagEnd(at: number): { end: number; selfClosing: boolean } {
    const { html } = this;
    let i = at;
    for (let values = 0; values < MAX_VALUES; values++) {
      if (this.nextGt < i) this.nextGt = this.find('>', i);
      if (this.nextEquals < i) this.nextEquals = this.find('=', i);
      if (this.nextEquals >= this.nextGt) break;
      i = this.nextEquals + 1;
      while (i < this.end && (isSpace(html.charCodeAt(i)) || html.charCodeAt(i) === NEWLINE)) i++;
      const quote = html[i];
      if (quote === '"' || quote === "'") i = this.after(quote, i + 1);
    }
    if (this.nextGt < i) this.nextGt = this.find('>', i);
    const gt = this.nextGt;
    return gt >= this.end ? { end: this.end, selfClosing: false } : { end: gt + 1, selfClosing: html.charCodeAt(gt - 1) === SLASH };
  }

  /** Past the end tag of the raw-text element `name` whose content starts at `pos`, or the end of the input. */
  private closing(name: string): number {
    const { html } = this;
    for (let from = this.pos; ; ) {
      const at = html.indexOf('</', from);
      if (at < 0 || at >= this.end) return this.end;
      const nameEnd = at + 2 + name.length;
      if (html.slice(at + 2, nameEnd).toLowerCase() === name && (nameEnd >= this.end || isNameEnd(html.charCodeAt(nameEnd)))) {
        return this.tagEnd(nameEnd).end;
      }
      from = at + 2;
    }
  }

  /** Where the next `token` from `from` is, or the end of the input when there is none. */
  private find(token: string, from: number): number {
    const at = this.html.indexOf(token, from);
    return at < 0 || at >= this.end ? this.end : at;
  }

  /** Past the next `token` from `from`, or the end of the input when there is none. */
  private after(token: string, from: number): number {
    const at = this.html.indexOf(token, from);
    return at < 0 || at + token.length > this.end ? this.end : at + token.length;
  }
}

/**
 * The visible text of an HTML document: scripts, styles, the head, templates and SVG dropped,
 * tags as white space (line breaks after paragraphs, headings, list items and the like), common
 * entities decoded, white space collapsed. Linear in the part of the document it reads, and
 * read in slices with a turn of the event loop between them, so a 5 MB document of adversarial
 * markup never holds the loop for more than a few milliseconds.
 */
export async function htmlToText(html: string, bounds: HtmlTextBounds): Promise<HtmlText> {
  const scanner = new HtmlTextScanner(html, Math.min(html.length, bounds.maxInputChars), bounds.maxChars);
  for (;;) {
    scanner.read(SLICE_CHARS);
    if (scanner.done) return scanner.result();
    await nextTurn();
  }
}
