import { useState } from 'preact/hooks';

import type { Monitor } from '../admin-types.js';

interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** A box drawn over a picture: a rectangle in CSS px of the page, and the class that colours it. */
export interface PictureBox {
  rect: Rect;
  kind: string;
  label: string;
}

/** Device scale factors of the capture presets, as server/capture/presets.ts has them. */
const DEVICE_SCALE: Record<string, number> = { desktop: 1, tablet: 2, mobile: 3 };

/** Picture pixels per CSS pixel of a monitor's captures: its `scale`, else its device's (regions and masks are in CSS px). */
export function pictureScale(monitor: Pick<Monitor, 'capture'>): number {
  const { scale, device } = monitor.capture as { scale?: unknown; device?: unknown };
  if (typeof scale === 'number' && scale > 0) return scale;
  return DEVICE_SCALE[typeof device === 'string' ? device : 'desktop'] ?? 1;
}

/**
 * A picture with boxes over it. The boxes are placed in percent of the picture once its size is
 * known, so they follow it however wide it is shown.
 */
export function BoxedPicture({ src, alt, boxes, scale = 1 }: { src: string; alt: string; boxes: PictureBox[]; scale?: number }) {
  const [size, setSize] = useState<{ width: number; height: number } | null>(null);
  return (
    <div class="boxed-picture">
      <img src={src} alt={alt} onLoad={(e) => setSize({ width: e.currentTarget.naturalWidth, height: e.currentTarget.naturalHeight })} />
      {size &&
        boxes.map(({ rect, kind, label }, i) => (
          <span
            key={i}
            class={`picture-box box-${kind}`}
            title={label}
            aria-hidden="true"
            style={{
              left: `${((rect.x * scale) / size.width) * 100}%`,
              top: `${((rect.y * scale) / size.height) * 100}%`,
              width: `${((rect.width * scale) / size.width) * 100}%`,
              height: `${((rect.height * scale) / size.height) * 100}%`,
            }}
          />
        ))}
    </div>
  );
}
