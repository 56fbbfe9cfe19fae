import { CaptureError } from '../engine.js';
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
  const { data } = await driver.send('Page.printToPDF', {
    ...A4,
    printBackground: true,
    marginTop: margin,
    marginBottom: margin,
    marginLeft: margin,
    marginRight: margin,
    preferCSSPageSize,
  });
  return Buffer.from(data, 'base64');
}
