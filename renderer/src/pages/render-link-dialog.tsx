import { useState } from 'preact/hooks';

import type { Key } from '../admin-types.js';
import { api } from '../api-client.js';
import { CopyButton } from '../components/copy-button.js';
import { CheckboxField, SelectField, TextField } from '../components/fields.js';
import { FormFooter } from '../components/form-footer.js';
import { Modal } from '../components/modal.js';
import { routeApiError } from '../field-errors.js';

type Device = 'desktop' | 'tablet' | 'mobile';
type Format = 'png' | 'jpeg' | 'webp' | 'pdf';

const DEVICES = [
  { value: 'desktop', label: 'Desktop (1920 × 1080)' },
  { value: 'tablet', label: 'Tablet (768 × 1024)' },
  { value: 'mobile', label: 'Mobile (390 × 844)' },
] as const;
const FORMATS = [
  { value: 'png', label: 'PNG' },
  { value: 'jpeg', label: 'JPEG' },
  { value: 'webp', label: 'WebP' },
  { value: 'pdf', label: 'PDF' },
] as const;
const CACHE = [
  { value: '3600', label: 'An hour (the default)' },
  { value: '86400', label: 'A day' },
  { value: '604800', label: 'A week' },
  { value: '0', label: 'Never: a new capture each time' },
] as const;

/**
 * Makes a signed render link for a URL typed in: the service signs it with the key's secret, so
 * the secret never reaches the panel. The link goes straight into an <img> on a dashboard or wiki.
 * A key made before render links has no secret; the dialog makes one (a rotation) first.
 */
export function RenderLinkDialog({ apiKey, onClose, onKeyChanged }: { apiKey: Key; onClose: () => void; onKeyChanged: (k: Key) => void }) {
  const [hasSecret, setHasSecret] = useState(apiKey.has_signing_secret);
  const [url, setUrl] = useState('');
  const [device, setDevice] = useState<Device>('desktop');
  const [format, setFormat] = useState<Format>('png');
  const [fullPage, setFullPage] = useState(false);
  const [cacheTtl, setCacheTtl] = useState<string>('3600');
  const [link, setLink] = useState<string | null>(null);
  const [errors, setErrors] = useState<{ url?: string; form?: string }>({});
  const [busy, setBusy] = useState(false);
  const [rotation, setRotation] = useState<'idle' | 'asking' | { secret: string }>('idle');

  const rotate = async () => {
    setBusy(true);
    try {
      const { signing_secret: secret } = await api<{ signing_secret: string }>(`/admin/api/keys/${apiKey.id}/signing-secret`, { method: 'POST' });
      setHasSecret(true);
      setLink(null);
      setRotation({ secret });
      onKeyChanged({ ...apiKey, has_signing_secret: true });
    } catch (err) {
      setErrors({ form: routeApiError(err, [] as const).message });
      setRotation('idle');
    } finally {
      setBusy(false);
    }
  };

  const submit = async (e: Event) => {
    e.preventDefault();
    if (!/^https?:\/\/\S+$/i.test(url.trim())) {
      setErrors({ url: 'Type the address of the page, with http:// or https://.' });
      return;
    }
    setErrors({});
    setBusy(true);
    try {
      if (!hasSecret) {
        await api<{ signing_secret: string }>(`/admin/api/keys/${apiKey.id}/signing-secret`, { method: 'POST' });
        setHasSecret(true);
        onKeyChanged({ ...apiKey, has_signing_secret: true });
      }
      const body = { url: url.trim(), devices: [device], format, full_page: fullPage, cache_ttl: Number(cacheTtl) };
      setLink((await api<{ render_url: string }>(`/admin/api/keys/${apiKey.id}/render-link`, { method: 'POST', body })).render_url);
    } catch (err) {
      const { field, message } = routeApiError(err, ['url'] as const);
      setErrors({ [field ?? 'form']: message });
    } finally {
      setBusy(false);
    }
  };

  return (
    <Modal title={`Render link with key ${apiKey.name || apiKey.prefix}`} onClose={onClose} busy={busy}>
      <form onSubmit={submit} noValidate>
        <TextField
          label="Page to capture"
          type="url"
          value={url}
          onInput={(v) => {
            setUrl(v);
            setLink(null);
          }}
          placeholder="https://example.com/"
          error={errors.url}
          autoFocus
        />
        <SelectField label="Device" value={device} onChange={(v) => (setDevice(v), setLink(null))} options={DEVICES} />
        <SelectField label="Format" value={format} onChange={(v) => (setFormat(v), setLink(null))} options={FORMATS} />
        <CheckboxField label="Full page" checked={fullPage} onChange={(v) => (setFullPage(v), setLink(null))} />
        <SelectField
          label="Reuse a capture for"
          value={cacheTtl}
          onChange={(v) => (setCacheTtl(v), setLink(null))}
          options={CACHE}
          hint="Loads within this time get the same picture, without a new capture or a counted call."
        />
        {!hasSecret && (
          <p class="notice">This key was made before render links and has no signing secret yet; making the link creates one.</p>
        )}
        {link && (
          <div class="field">
            <label for="render-link">Render link</label>
            <div class="input-row">
              <input id="render-link" class="mono" type="text" readOnly value={link} onFocus={(e) => e.currentTarget.select()} />
              <CopyButton text={link} label="Copy render link" class="button primary" />
            </div>
            <p class="field-hint">
              Put it in an image: <code>{`<img src="${link.slice(0, 40)}…">`}</code>. Anyone with the link gets the picture; nobody can
              change what it asks for. Rotating the key’s signing secret ends every link made so far.
            </p>
          </div>
        )}
        <FormFooter error={errors.form} busy={busy} onCancel={onClose} submitLabel={link ? 'Make it again' : 'Make link'} busyLabel="Making…" />
      </form>
      <section class="dialog-section" aria-label="Signing secret">
        <h3 class="dialog-subtitle">Signing secret</h3>
        {rotation === 'idle' && (
          <p class="field-hint">
            Clients that sign their own links use the key’s signing secret, shown once when the key was created.{' '}
            <button type="button" class="button small" onClick={() => setRotation('asking')}>
              Rotate signing secret…
            </button>
          </p>
        )}
        {rotation === 'asking' && (
          <p class="notice notice-warn">
            Every render link made with this key so far answers 403 from now on.{' '}
            <button type="button" class="button small danger-text" disabled={busy} onClick={rotate}>
              Rotate now
            </button>{' '}
            <button type="button" class="button small" onClick={() => setRotation('idle')}>
              Keep it
            </button>
          </p>
        )}
        {typeof rotation === 'object' && (
          <div class="field">
            <label for="new-signing-secret">New signing secret (shown this once)</label>
            <div class="input-row">
              <input id="new-signing-secret" class="mono" type="text" readOnly value={rotation.secret} onFocus={(e) => e.currentTarget.select()} />
              <CopyButton text={rotation.secret} label="Copy secret" class="button" />
            </div>
          </div>
        )}
      </section>
    </Modal>
  );
}
