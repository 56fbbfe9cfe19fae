import sharp from 'sharp';

/** How the service's image of a page compares with the raw playwright screenshot of it. */
export interface ImageComparison {
  scenario: string;
  width: number;
  height: number;
  sameSize: boolean;
  /** Share of pixels whose RGBA differs at all, 0–1. */
  differingPixels: number;
  serviceBytes: number;
  rawBytes: number;
  /** serviceBytes / rawBytes: at most 1 means the service's PNG is no larger than Chromium's own. */
  sizeRatio: number;
}

/** Decodes both PNGs and compares them pixel by pixel. */
export async function compareImages(scenario: string, service: Buffer, raw: Buffer): Promise<ImageComparison> {
  const [a, b] = await Promise.all(
    [service, raw].map((png) => sharp(png, { limitInputPixels: false }).ensureAlpha().raw().toBuffer({ resolveWithObject: true })),
  );
  const sameSize = a.info.width === b.info.width && a.info.height === b.info.height;
  let differing = 0;
  if (sameSize) {
    for (let i = 0; i < a.data.length; i += 4) {
      if (a.data[i] !== b.data[i] || a.data[i + 1] !== b.data[i + 1] || a.data[i + 2] !== b.data[i + 2] || a.data[i + 3] !== b.data[i + 3]) {
        differing++;
      }
    }
  }
  const pixels = a.info.width * a.info.height;
  return {
    scenario,
    width: a.info.width,
    height: a.info.height,
    sameSize,
    differingPixels: sameSize ? differing / pixels : 1,
    serviceBytes: service.length,
    rawBytes: raw.length,
    sizeRatio: service.length / raw.length,
  };
}
