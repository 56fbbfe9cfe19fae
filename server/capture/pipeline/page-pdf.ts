import { CaptureError } from '../capture-errors.js';
import type { PageDriver } from './page-driver.js';

/** A4 in inches, as Page.printToPDF measures paper. */
const A4 = { paperWidth: 8.27, paperHeight: 11.69 };
/** A4 in PostScript points, as a PDF's page size is reported. */
export const A4_POINTS = { width: 595, height: 842 };

/**
 * The page printed to a PDF: A4, backgrounds printed, 1 cm margins unless the page's CSS sets its
 * own page size. Chromium refuses a CSS page size it cannot print (`@page { size: 1000in }`, from
 * the page or the `styles` option; 800 inches a side printed, in 0.5 s) with "Printing failed":
 * such a page is printed on A4 instead. One that cannot be printed on A4 either fails the capture.
 */
export async function printPdf(driver: PageDriver): Promise<Buffer> {
  const refused = (err: unknown) => /Printing failed/i.test(String(err));
  try {
    return await print(driver, true);
  } catch (err) {
    if (!refused(err)) throw err;
  }
  return print(driver, false).catch((err: unknown) => {
    throw refused(err) ? new CaptureError('Chromium could not print the page to PDF') : err;
  });
}

async function print(driver: PageDriver, preferCSSPageSize: boolean): Promise<Buffer> {
  const margin = 0.39;
  const { stream } = await driver.send('Page.printToPDF', {
    ...A4,
    printBackground: true,
    marginTop: margin,
    marginBottom: margin,
    marginLeft: margin,
    marginRight: margin,
    preferCSSPageSize,
    transferMode: 'ReturnAsStream',
  });
  return readStream(driver, stream);
}

/** The most of a PDF read in one IO.read, in bytes (a third more as base64 in its message). */
const READ_CHUNK_BYTES = 4 * 2 ** 20;
/** Largest PDF kept, in bytes: a page may print itself to any number of pages. */
export const PDF_MAX_BYTES = 256 * 2 ** 20;

/**
 * A stream the browser holds (Page.printToPDF's ReturnAsStream), read in pieces of at most
 * READ_CHUNK_BYTES, so no single message grows with the document; one over PDF_MAX_BYTES fails
 * the capture. The stream is closed either way.
 */
async function readStream(driver: PageDriver, handle: string): Promise<Buffer> {
  const pieces: Buffer[] = [];
  let total = 0;
  try {
    for (;;) {
      const { data, base64Encoded, eof } = await driver.send('IO.read', { handle, size: READ_CHUNK_BYTES });
      const piece = Buffer.from(data, base64Encoded ? 'base64' : 'latin1');
      total += piece.length;
      if (total > PDF_MAX_BYTES) throw new CaptureError(`The page's PDF is larger than ${PDF_MAX_BYTES / 2 ** 20} MiB`);
      pieces.push(piece);
      if (eof) return Buffer.concat(pieces, total);
    }
  } finally {
    await driver.send('IO.close', { handle }).catch(() => undefined);
  }
}
