import sharp from 'sharp';

import type { CaptureOptions } from '../capture-options.js';
import type { ImageFormat } from '../engine.js';
import { type EncodedImage, encodePicture, MAX_DECODED_PIXELS } from '../outputs/image-encoder.js';
import { bitmapSize } from '../pipeline/capture-clip.js';

// `image_width` / `image_height`: the picture resized after the capture, for thumbnails and
// previews. One side given: the other follows the aspect ratio. Both: the picture is fitted
// inside that box (never cropped, never stretched), centred, and the box is the image's exact
// size; the margins are transparent in png and webp, white in jpeg. The resized picture is
// bounded as every picture is (bitmapSize()): one side asked of a long, thin picture (a 30,000 ×
// 10 px element at `image_height: 600` asks for 1,800,000 × 600) is made smaller instead,
// keeping its aspect ratio, so that its size is one the bound keeps whole.

/** Whether the options ask for a resized picture. */
export const resizeAsked = (options: CaptureOptions): boolean => options.imageWidth !== undefined || options.imageHeight !== undefined;

const TRANSPARENT = { r: 0, g: 0, b: 0, alpha: 0 };
const WHITE = { r: 255, g: 255, b: 255, alpha: 1 };

/**
 * The size in pixels `picture` (device px) is resized to for `asked` (`image_width`,
 * `image_height`; at least one): the box when both are given, else the side given and the other
 * following the aspect ratio. bitmapSize() bounds it as it bounds every picture: what it would
 * cut is scaled down instead, keeping the aspect ratio, to fit inside what it keeps (so within
 * MAX_CAPTURE_PIXELS and the longest side `format` takes).
 */
export function resizedSize(
  picture: { width: number; height: number },
  asked: { width?: number; height?: number },
  format: ImageFormat,
): { width: number; height: number } {
  const target =
    asked.width !== undefined && asked.height !== undefined
      ? { width: asked.width, height: asked.height }
      : asked.width !== undefined
        ? { width: asked.width, height: (picture.height * asked.width) / picture.width }
        : { width: (picture.width * asked.height!) / picture.height, height: asked.height! };
  const bitmap = bitmapSize(target, 1, { format });
  if (!bitmap.truncated) return { width: bitmap.width, height: bitmap.height };
  // The side bitmapSize() cut most keeps its cut length; the other shrinks as much.
  if (bitmap.width * target.height <= bitmap.height * target.width) {
    return { width: bitmap.width, height: Math.max(1, Math.floor((target.height * bitmap.width) / target.width)) };
  }
  return { width: Math.max(1, Math.floor((target.width * bitmap.height) / target.height)), height: bitmap.height };
}

/**
 * `image` (encoded as `format`) resized as `options` ask, re-encoded in the same format; the
 * image itself when they ask for no size or the format is pdf. Its size is decided before sharp
 * starts (resizedSize()), so the work is bounded like a capture's; and it is not started after
 * the capture's `deadline` (a Date.now() time), nor left running past it (encodePicture()).
 */
export async function resizeImage(image: EncodedImage, format: ImageFormat, quality: number | undefined, options: CaptureOptions, deadline: number): Promise<EncodedImage> {
  if (!resizeAsked(options) || format === 'pdf') return image;
  const { imageWidth: width, imageHeight: height } = options;
  const size = resizedSize(image, { width, height }, format);
  const resized = sharp(image.data, { limitInputPixels: MAX_DECODED_PIXELS }).resize({
    ...size,
    // The size keeps the aspect ratio already when one side was asked.
    fit: width !== undefined && height !== undefined ? 'contain' : 'fill',
    background: format === 'jpeg' ? WHITE : TRANSPARENT,
  });
  return encodePicture(resized, size, format, quality, deadline);
}
