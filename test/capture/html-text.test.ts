import { describe, expect, it } from 'vitest';

import { htmlToText } from '../../server/capture/outputs/html-text.js';

const WIDE = { maxChars: 100_000, maxInputChars: 5_000_000 };
const textOf = async (html: string) => (await htmlToText(html, WIDE)).text;

describe('the text of a page source', () => {
  it('keeps the text of a document and drops its scripts, styles and tags', async () => {
    const html =
      '<html><head><title>T</title><style>p{}</style></head><body><script>var x = "<p>no</p>";</script>' +
      '<h1>Fish &amp; chips</h1><p>caf&eacute; &#233; &#x2014; <b>bold</b></p><!-- hidden --><ul><li>one</li><li>two</li></ul></body></html>';
    expect(await textOf(html)).toBe('Fish & chips\ncaf&eacute; é — bold\none\ntwo');
  });

  it('ends a line after paragraphs, headings, list items and br, and collapses white space', async () => {
    const html = '<div>  first\tline <br> second &nbsp; line</div>\n\n<p>third\r\n\n   line</p><span>a</span><span>b</span>';
    expect(await textOf(html)).toBe('first line\nsecond line\nthird\nline\na b');
  });

  it("reads a script's content as raw text up to its own end tag, in any case", async () => {
    const html = '<p>before</p><script>if (a < b) document.write("<p>no</p><!--")</SCRIPT ><p>after</p><style>a::after{content:"</p>x"}</style>';
    expect(await textOf(html)).toBe('before\nafter');
  });

  it('reads a quoted attribute value holding > as part of its tag', async () => {
    expect(await textOf('<p title="1 > 0" data-x=\'a>b\'>shown</p><a href=x>y</a>')).toBe('shown\ny');
  });

  it('drops the text of nested SVG and templates until the outermost one ends', async () => {
    expect(await textOf('<p>a</p><svg><svg><text>in</text></svg><text>still in</text></svg><template><p>t</p></template><p>b</p>')).toBe('a\nb');
  });

  it('keeps a lone & or < and an unknown or unfinished entity as written', async () => {
    expect(await textOf('<p>a & b < c &copy; &#xZZ; &#0; &amp</p>')).toBe('a & b < c &copy; &#xZZ; &#0; &amp');
  });

  it('reads markup left open to the end of the input, as a browser does, without reading it again', async () => {
    const svgs = '<svg'.repeat(1_000_000);
    // 4 MB of "<svg" in a comment: the shape that took a backtracking expression minutes.
    expect(await textOf(`<p>before</p><!--${svgs}--><p>after</p>`)).toBe('before\nafter');
    expect(await textOf(`<p>before</p><svg>${'<svg>'.repeat(1_000_000)}<p>after</p>`)).toBe('before');
    expect(await textOf(`<p>before</p>${svgs}`)).toBe('before');
    expect(await textOf(`<p>before</p>${'<script>'.repeat(600_000)}`)).toBe('before');
    expect(await textOf(`<p>before</p><a b="${'x'.repeat(5_000_000)}`)).toBe('before');
    expect(await textOf(`<p>before</p><a ${'x='.repeat(2_000_000)}>after`)).toBe('before\nafter');
    expect(await textOf(`<p>before</p><!--${'-'.repeat(5_000_000)}`)).toBe('before');
  });

  it('stops at maxChars and says the text went on', async () => {
    const html = `<p>${'word '.repeat(100_000)}</p>`;
    expect(await htmlToText(html, { maxChars: 12, maxInputChars: html.length })).toEqual({ text: 'word word wo', truncated: true });
    expect(await htmlToText('<p>word</p>', { maxChars: 4, maxInputChars: 100 })).toEqual({ text: 'word', truncated: false });
  });

  it('reads no further than maxInputChars and says so', async () => {
    expect(await htmlToText('<p>one two three</p>', { maxChars: 100, maxInputChars: 10 })).toEqual({ text: 'one two', truncated: true });
  });

  it('hands the event loop back while it reads a large document', async () => {
    let turns = 0;
    let reading = true;
    const counting = (async () => {
      while (reading) {
        await new Promise((resolve) => setImmediate(resolve));
        turns++;
      }
    })();
    await htmlToText(`<!--${'<svg'.repeat(250_000)}--><b>${'<i>'.repeat(1_000_000)}`, WIDE);
    reading = false;
    await counting;
    // 4 MB read in slices of 64 K characters: about sixty turns of the loop for other work.
    expect(turns).toBeGreaterThan(20);
  });
});
