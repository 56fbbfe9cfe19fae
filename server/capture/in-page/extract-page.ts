// The page side of extraction (extract.ts): a function sent as source text into the captured
// page, with Readability, Turndown and its GFM plugin handed to it. It must stay
// self-contained: no imports, no closures over module scope, plain syntax. Each output is
// computed on its own, so one that fails leaves the others; what failed is named in `failed`.

/** What extractInPage is asked for, and the bounds it keeps to. */
export interface ExtractArgs {
  markdown: boolean;
  text: boolean;
  metadata: boolean;
  links: boolean;
  maxLinks: number;
  maxString: number;
  maxItems: number;
}

/** What extractInPage returns, before extract.ts bounds and checks it again. */
export interface PageExtract {
  markdown?: string;
  text?: string;
  metadata?: unknown;
  links?: { links: Array<{ url: string; text: string }>; truncated: boolean };
  /** `<output>: <why>` for each output that could not be made. */
  failed: string[];
}

type ReadabilityClass = new (doc: Document, options?: object) => { parse(): { title?: string | null; content?: string | null; textContent?: string | null } | null };
interface TurndownRule {
  filter: (node: HTMLElement) => boolean;
  replacement: (content: string, node: HTMLElement) => string;
}
type TurndownClass = new (options?: object) => { use(plugin: unknown): void; addRule(name: string, rule: TurndownRule): void; turndown(html: string): string };

export function extractInPage(Readability: ReadabilityClass, Turndown: TurndownClass, gfm: unknown, args: ExtractArgs): PageExtract {
  const out: PageExtract = { failed: [] };
  const cap = (s: unknown) => (typeof s === 'string' ? s.trim().slice(0, args.maxString) : '');
  const squash = (s: string) => s.replace(/\s+/g, ' ').trim();
  const why = (err: unknown) => String(err && (err as Error).message ? (err as Error).message : err).slice(0, 200);

  if (args.markdown || args.text) {
    try {
      const clone = document.cloneNode(true) as Document;
      const article = new Readability(clone).parse();
      if (!article || !article.content) throw new Error('no main content was found');
      const title = squash(article.title || document.title || '');
      if (args.markdown) {
        const turndown = new Turndown({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-', emDelimiter: '_' });
        turndown.use(gfm);
        // A block of code is the whole text of its <pre>: Turndown's own rule keeps only a first
        // <code> child's, and drops the rest of a shell session written as prompt, then command.
        turndown.addRule('preformatted', {
          filter: (node) => node.nodeName === 'PRE',
          replacement: (_content, node) => {
            const code = (node.textContent || '').replace(/\n$/, '');
            const classes = `${node.getAttribute('class') || ''} ${(node.querySelector('code') && node.querySelector('code')!.getAttribute('class')) || ''}`;
            const language = (/(?:^|\s)lang(?:uage)?-([\w+#-]+)/.exec(classes) || ['', ''])[1];
            let fence = '```';
            while (new RegExp(`^${fence}`, 'm').test(code)) fence += '`';
            return `\n\n${fence}${language}\n${code}\n${fence}\n\n`;
          },
        });
        const body = turndown.turndown(article.content).trim();
        out.markdown = (title ? `# ${title}\n\n` : '') + body + '\n';
      }
      if (args.text) {
        const lines = String(article.textContent || '')
          .split('\n')
          .map((line) => line.replace(/[ \t\u00a0]+/g, ' ').trim());
        const body = lines.join('\n').replace(/\n{3,}/g, '\n\n').trim();
        out.text = (title ? `${title}\n\n` : '') + body + '\n';
      }
    } catch (err) {
      if (args.markdown) out.failed.push(`markdown: ${why(err)}`);
      if (args.text) out.failed.push(`text: ${why(err)}`);
    }
  }

  if (args.metadata) {
    try {
      const meta = (attr: string, name: string): string => {
        for (const el of Array.from(document.querySelectorAll('meta'))) {
          if ((el.getAttribute(attr) || '').toLowerCase() === name) return cap(el.getAttribute('content'));
        }
        return '';
      };
      const absolute = (href: string | null): string => {
        if (!href) return '';
        try {
          return cap(new URL(href, document.baseURI).href);
        } catch {
          return '';
        }
      };
      const prefixed = (attr: string, prefix: string): Record<string, string> => {
        const found: Record<string, string> = {};
        let count = 0;
        for (const el of Array.from(document.querySelectorAll('meta'))) {
          const key = (el.getAttribute(attr) || '').toLowerCase();
          if (!key.startsWith(prefix) || key.length > 100 || key in found) continue;
          if (count++ >= args.maxItems) break;
          const value = cap(el.getAttribute('content'));
          found[key.slice(prefix.length)] = /(^|:)(image|url|audio|video)(:url|:secure_url)?$/.test(key) ? absolute(value) || value : value;
        }
        return found;
      };
      const icons: Array<{ url: string; rel: string; sizes: string; type: string }> = [];
      const feeds: Array<{ url: string; title: string; type: string }> = [];
      for (const el of Array.from(document.querySelectorAll('link[rel][href]'))) {
        const rel = (el.getAttribute('rel') || '').toLowerCase().split(/\s+/);
        const type = (el.getAttribute('type') || '').toLowerCase();
        const url = absolute(el.getAttribute('href'));
        if (!url) continue;
        if (rel.some((r) => r === 'icon' || r === 'apple-touch-icon' || r === 'apple-touch-icon-precomposed' || r === 'mask-icon')) {
          if (icons.length < args.maxItems) icons.push({ url, rel: cap(rel.join(' ')), sizes: cap(el.getAttribute('sizes')), type: cap(type) });
        } else if (rel.includes('alternate') && (type === 'application/rss+xml' || type === 'application/atom+xml' || type === 'application/feed+json')) {
          if (feeds.length < args.maxItems) feeds.push({ url, title: cap(el.getAttribute('title')), type });
        }
      }
      const canonical = document.querySelector('link[rel~="canonical"][href]');
      let published = meta('property', 'article:published_time') || meta('name', 'article:published_time');
      let modified = meta('property', 'article:modified_time') || meta('name', 'article:modified_time') || meta('property', 'og:updated_time');
      const scripts = Array.from(document.querySelectorAll('script[type="application/ld+json"]')).slice(0, args.maxItems);
      for (const script of scripts) {
        if (published && modified) break;
        const source = script.textContent || '';
        if (source.length > 200_000) continue;
        try {
          const queue: unknown[] = [JSON.parse(source)];
          for (let seen = 0; queue.length && seen < 200; seen++) {
            const node = queue.shift();
            if (Array.isArray(node)) queue.push(...node);
            else if (node && typeof node === 'object') {
              const o = node as Record<string, unknown>;
              if (!published && typeof o.datePublished === 'string') published = cap(o.datePublished);
              if (!modified && typeof o.dateModified === 'string') modified = cap(o.dateModified);
              if (o['@graph']) queue.push(o['@graph']);
            }
          }
        } catch {
          // A broken JSON-LD block says nothing; the others may.
        }
      }
      const iconFirst = icons.find((i) => i.rel.split(' ').includes('icon'));
      out.metadata = {
        title: cap(document.title),
        description: meta('name', 'description'),
        language: cap(document.documentElement.getAttribute('lang')),
        canonical_url: canonical ? absolute(canonical.getAttribute('href')) : '',
        open_graph: prefixed('property', 'og:'),
        twitter: prefixed('name', 'twitter:'),
        favicon: iconFirst ? iconFirst.url : absolute('/favicon.ico'),
        icons,
        feeds,
        published_time: published,
        modified_time: modified,
      };
    } catch (err) {
      out.failed.push(`metadata: ${why(err)}`);
    }
  }

  if (args.links) {
    try {
      const seen: Record<string, true> = Object.create(null);
      const links: Array<{ url: string; text: string }> = [];
      let truncated = false;
      for (const a of Array.from(document.querySelectorAll('a[href], area[href]'))) {
        let url: string;
        try {
          url = new URL(a.getAttribute('href') || '', document.baseURI).href;
        } catch {
          continue;
        }
        if (!/^https?:/i.test(url) || url.length > args.maxString || seen[url]) continue;
        if (links.length >= args.maxLinks) {
          truncated = true;
          break;
        }
        seen[url] = true;
        const label = squash(a.textContent || '') || squash(a.getAttribute('aria-label') || a.getAttribute('title') || a.getAttribute('alt') || '');
        links.push({ url, text: label.slice(0, 500) });
      }
      out.links = { links, truncated };
    } catch (err) {
      out.failed.push(`links: ${why(err)}`);
    }
  }
  return out;
}
