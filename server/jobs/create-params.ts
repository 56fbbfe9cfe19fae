import type { ImageFormat } from '../capture/engine.js';
import type { DeviceName } from '../capture/presets.js';
import type { JobOptions, JobSecrets } from '../store/records/job-options.js';

/** What a valid POST /v1/screenshot asks for, before it becomes jobs. */
export interface CreateParams {
  url: string;
  devices: DeviceName[];
  full_page: boolean;
  googlebot: boolean;
  callback_url: string | null;
  /** Viewport overrides in CSS pixels; the preset's size where null. */
  width: number | null;
  height: number | null;
  format: ImageFormat;
  quality: number | null;
  options: JobOptions;
  /** Secrets to seal in the job; null when the request gave none. */
  secrets: JobSecrets | null;
  /** Seconds an earlier identical result may be served instead of a new capture; 0 never. */
  cache_ttl: number;
}
