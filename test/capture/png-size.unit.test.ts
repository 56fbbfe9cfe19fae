import sharp from 'sharp';
import { describe, expect, it } from 'vitest';

import { pngSize } from '../../server/capture/outputs/png-size.js';

describe('pngSize', () => {
  it('reads the width and height from the header, as sharp decodes them', async () => {
    for (const [width, height] of [[1, 1], [3, 70_000], [16_384, 2], [1920, 1080]] as const) {
      const png = await sharp({ create: { width, height, channels: 3, background: '#fff' } }).png({ compressionLevel: 1 }).toBuffer();
      expect(pngSize(png)).toEqual({ width, height });
      const decoded = await sharp(png, { limitInputPixels: false }).metadata();
      expect([decoded.width, decoded.height]).toEqual([width, height]);
    }
  });
});
