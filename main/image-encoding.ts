import type { NativeImage } from 'electron';
import sharp from 'sharp';
import type { ImageFormat } from '../server/capture/engine.js';

/** Quality used for jpeg and webp when the request names none (CaptureRequest's default). */
export const DEFAULT_QUALITY = 80;

/**
 * Encodes a captured NativeImage. Chromium encodes png and jpeg itself; it has no webp
 * encoder on NativeImage, so webp goes through sharp.
 */
export async function encodeNativeImage(image: NativeImage, format: ImageFormat, quality = DEFAULT_QUALITY): Promise<Buffer> {
  switch (format) {
    case 'png':
      return image.toPNG();
    case 'jpeg':
      return image.toJPEG(quality);
    case 'webp':
      return sharp(image.toPNG()).webp({ quality }).toBuffer();
  }
}

/**
 * Width and height in device pixels, read from the encoded file itself: NativeImage sizes
 * are in DIPs, which differ from the pixels on a HiDPI display.
 */
export async function encodedSize(image: Buffer): Promise<{ width: number; height: number }> {
  const { width, height } = await sharp(image).metadata();
  if (!width || !height) throw new Error('The captured image has no size');
  return { width, height };
}
