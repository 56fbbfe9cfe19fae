import sharp from 'sharp';

import type { CaptureOptions } from '../capture-options.js';
import type { ImageFormat } from '../engine.js';
import { type EncodedImage,encodeScreenshot } from '../outputs/image-encoder.js';

// `image_width` / `image_height`: the picture resized after the capture, for thumbnails and
// previews. One side given: the other follows the aspect ratio. Both: the picture is fitted
// inside that box (never cropped, never stretched), centred, and the box is the image's exact
// size; the margins are transparent in png and webp, white in jpeg.

/** Whether the options ask for a resized picture. */
export const resizeAsked = (options: CaptureOptions): boolean => options.imageWidth !== undefined || options.imageHeight !== undefined;

const TRANSPARENT = { r: 0, g: 0, b: 0, alpha: 0 };
const WHITE = { r: 255, g: 255, b: 255, alpha: 1 };

/**
 * `image` (encoded as `format`) resized as `options` ask, re-encoded in the same format; the
 * image itself when they ask for no size or the format is pdf.
 */
export async function resizeImage(image: EncodedImage, format: ImageFormat, quality: number | undefined, options: CaptureOptions): Promise<EncodedImage> {
  if (!resizeAsked(options) || format === 'pdf') return image;
  const { imageWidth: width, imageHeight: height } = options;
  const both = width !== undefined && height !== undefined;
  const resized = await sharp(image.data, { limitInputPixels: false })
    .resize({
      ...(width === undefined ? {} : { width }),
      ...(height === undefined ? {} : { height }),
      fit: both ? 'contain' : 'inside',
      background: format === 'jpeg' ? WHITE : TRANSPARENT,
    })
    // A quick PNG only feeds the encoder, as the screenshot's own does.
    .png({ compressionLevel: 1 })
    .toBuffer();
  return encodeScreenshot(resized, format, quality);
}
