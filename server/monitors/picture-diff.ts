import pixelmatch from 'pixelmatch';
import sharp from 'sharp';

/** What comparing two pictures found. */
export interface PictureDifference {
  /** Differing pixels / all pixels of the new picture; 1 when the sizes differ. */
  difference: number;
  /** The diff picture (PNG): changed pixels in red over a faded copy of the new picture; null when none differ. */
  diff: Buffer | null;
}

/**
 * Per-channel colour distance under which two pixels count as equal (pixelmatch's YIQ-based
 * threshold; 0.1 is its default and ignores compression noise, not a changed word).
 */
const PIXEL_THRESHOLD = 0.1;
/** How much of the new picture shows under the red: faded, so the red stands out. */
const FADE = 0.2;
const RED: [number, number, number] = [255, 0, 0];

async function rgba(image: Buffer): Promise<{ data: Buffer; width: number; height: number }> {
  const { data, info } = await sharp(image, { limitInputPixels: false }).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

/**
 * Compares the picture of a check with its baseline: pixelmatch with its anti-aliasing detection
 * (anti-aliased edges that moved by a pixel are not counted). Pictures of another size count as
 * wholly changed (difference 1): their common part is compared for the picture, and what only
 * the new one covers is red.
 */
export async function comparePictures(baseline: Buffer, current: Buffer): Promise<PictureDifference> {
  const [before, after] = await Promise.all([rgba(baseline), rgba(current)]);
  const { width, height } = after;
  const sameSize = before.width === width && before.height === height;
  const common = sameSize ? before.data : fitTo(before, width, height);
  const output = Buffer.alloc(width * height * 4);
  // The new picture first: pixelmatch draws the faded copy of its first image under the red.
  const differing = pixelmatch(after.data, common, output, width, height, {
    threshold: PIXEL_THRESHOLD,
    includeAA: false,
    alpha: FADE,
    diffColor: RED,
    aaColor: [255, 255, 255],
  });
  if (!sameSize) paintOutside(output, width, height, before.width, before.height);
  const difference = sameSize ? differing / (width * height) : 1;
  if (difference === 0) return { difference: 0, diff: null };
  const diff = await sharp(output, { raw: { width, height, channels: 4 } }).png({ compressionLevel: 6 }).toBuffer();
  return { difference, diff };
}

/** The old picture's pixels on a canvas of the new one's size (transparent where it has none). */
function fitTo(picture: { data: Buffer; width: number; height: number }, width: number, height: number): Buffer {
  const out = Buffer.alloc(width * height * 4);
  const rows = Math.min(height, picture.height);
  const rowBytes = Math.min(width, picture.width) * 4;
  for (let y = 0; y < rows; y++) picture.data.copy(out, y * width * 4, y * picture.width * 4, y * picture.width * 4 + rowBytes);
  return out;
}

/** Paints red what lies outside the old picture's width × height. */
function paintOutside(output: Buffer, width: number, height: number, oldWidth: number, oldHeight: number): void {
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (x < oldWidth && y < oldHeight) continue;
      const i = (y * width + x) * 4;
      output[i] = RED[0];
      output[i + 1] = RED[1];
      output[i + 2] = RED[2];
      output[i + 3] = 255;
    }
  }
}
