/** What a capture produces: an image, or a PDF of the page. */
export type ImageFormat = 'png' | 'jpeg' | 'webp' | 'pdf';
/** The formats that are pictures (everything but pdf). */
export type PictureFormat = Exclude<ImageFormat, 'pdf'>;

export const IMAGE_CONTENT_TYPES: Record<ImageFormat, string> = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  pdf: 'application/pdf',
};
