import type { FileStore, StoredOutput } from '../../server/store/file-store.js';

const unused = (name: string) => () => {
  throw new Error(`FakeFileStore.${name} is not used by the job core`);
};

/** A job's files in memory: what was written, what was removed. Methods the job core does not call throw. */
export class FakeFileStore implements FileStore {
  readonly where = 'memory';
  readonly images = new Map<string, Buffer>();
  readonly thumbnails = new Set<string>();
  readonly sources = new Map<string, string>();
  readonly outputs = new Map<string, string>();
  /** `remove` calls, as [image file, job id]. */
  readonly removed: Array<[string | undefined, string]> = [];

  init(): Promise<void> {
    return Promise.resolve();
  }

  writeImage(fileName: string, data: Buffer): Promise<void> {
    this.images.set(fileName, data);
    return Promise.resolve();
  }

  writeThumbnail(fileName: string, image: Buffer): Promise<Buffer> {
    this.thumbnails.add(fileName);
    return Promise.resolve(image);
  }

  writeSource(jobId: string, html: string): Promise<void> {
    this.sources.set(jobId, html);
    return Promise.resolve();
  }

  writeOutput(jobId: string, output: StoredOutput, content: string): Promise<void> {
    this.outputs.set(`${jobId}/${output}`, content);
    return Promise.resolve();
  }

  remove(fileName: string | undefined, jobId: string): Promise<void> {
    this.removed.push([fileName, jobId]);
    if (fileName) this.images.delete(fileName);
    this.sources.delete(jobId);
    return Promise.resolve();
  }

  image = unused('image');
  readImage = unused('readImage');
  removeImage = unused('removeImage');
  readThumbnail = unused('readThumbnail');
  readSource = unused('readSource');
  readOutput = unused('readOutput');
  removeMany = unused('removeMany');
  presignedImageUrl = unused('presignedImageUrl');
  markers = unused('markers');
  health = unused('health');
}
