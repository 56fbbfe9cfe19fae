import { describe, expect, it } from 'vitest';

import { entryName, manifestCsv, type ManifestRow } from '../../server/jobs/batch-archive.js';

describe("a batch archive's entry names", () => {
  it('are the index, then the host and path with anything but letters, digits, dot, underscore and dash made a dash', () => {
    expect(entryName(0, 'https://example.com/', 'a1b2.png')).toBe('0000-example.com.png');
    expect(entryName(12, 'https://example.com:8443/docs/intro?lang=fr&v=2#top', 'f.jpg')).toBe('0012-example.com-8443-docs-intro-lang-fr-v-2.jpg');
    expect(entryName(999, 'about:html', 'f.webp')).toBe('0999-html.webp');
  });

  it('never make a path, a hidden file or anything but printable ASCII, whatever the URL', () => {
    for (const url of ['https://example.com/../../etc/passwd', 'https://example.com/%2e%2e/x', 'https://例え.jp/ページ', 'https://example.com/a\\b', 'https://.../', `https://example.com/${'x'.repeat(5000)}`]) {
      const name = entryName(3, url, 'z.png');
      expect(name).toMatch(/^0003-[A-Za-z0-9_][A-Za-z0-9._-]*\.png$/);
      expect(name).not.toContain('/');
      expect(name.length).toBeLessThanOrEqual(4 + 1 + 80 + 4);
    }
  });

  it('are unique within a batch: the index leads each one', () => {
    const names = [0, 1, 2].map((i) => entryName(i, 'https://example.com/same', 'f.png'));
    expect(new Set(names).size).toBe(3);
  });
});

describe("a batch archive's manifest.csv", () => {
  const row = (fields: Partial<ManifestRow>): ManifestRow => ({ index: 0, url: null, job_id: null, status: 'not_run', file: null, warnings: [], error: null, ...fields });

  it('quotes what has commas, quotes or line ends, joins warnings with ;, and leads a would-be formula with a quote mark', () => {
    const csv = manifestCsv([
      row({ index: 0, url: 'https://example.com/a,b', job_id: 'job_1', status: 'completed', file: '0000-x.png', warnings: ['blank', 'overlay'] }),
      row({ index: 1, url: 'https://example.com/', status: 'failed', error: '=HYPERLINK("x")' }),
    ]);
    expect(csv.split('\r\n')).toEqual([
      'index,url,job_id,status,file,warnings,error',
      '0,"https://example.com/a,b",job_1,completed,0000-x.png,blank;overlay,',
      `1,https://example.com/,,failed,,,"'=HYPERLINK(""x"")"`,
      '',
    ]);
  });
});
