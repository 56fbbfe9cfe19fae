import { useEffect, useState } from 'preact/hooks';

import type { Account, StorageDestination } from '../admin-types.js';
import { api, ApiRequestError } from '../api-client.js';
import { CheckboxField, TextField } from '../components/fields.js';
import { FormFooter } from '../components/form-footer.js';
import { Modal } from '../components/modal.js';
import { routeApiError } from '../field-errors.js';

const FIELDS = ['endpoint', 'bucket', 'prefix', 'region', 'access_key_id', 'secret_access_key', 'path_style'] as const;
type FieldName = (typeof FIELDS)[number];

/**
 * The account's storage destination (its own S3-compatible bucket): what is set, shown without
 * the secret; a form to set or replace it, whose credentials are asked for every time (the
 * server never gives them back); and its removal after a second click.
 */
export function StorageDestinationDialog({ account, onClose, onChanged }: { account: Account; onClose: () => void; onChanged: (message: string) => void }) {
  const path = `/admin/api/accounts/${account.id}/storage`;
  const [current, setCurrent] = useState<StorageDestination | null | undefined>(undefined);
  const [endpoint, setEndpoint] = useState('');
  const [bucket, setBucket] = useState('');
  const [prefix, setPrefix] = useState('');
  const [region, setRegion] = useState('');
  const [keyId, setKeyId] = useState('');
  const [secret, setSecret] = useState('');
  const [pathStyle, setPathStyle] = useState(false);
  const [errors, setErrors] = useState<Partial<Record<FieldName | 'form', string>>>({});
  const [busy, setBusy] = useState(false);
  const [confirmRemove, setConfirmRemove] = useState(false);

  const show = (destination: StorageDestination | null) => {
    setCurrent(destination);
    if (!destination) return;
    setEndpoint(destination.endpoint);
    setBucket(destination.bucket);
    setPrefix(destination.prefix);
    setRegion(destination.region);
    setPathStyle(destination.path_style);
  };

  useEffect(() => {
    const controller = new AbortController();
    api<StorageDestination>(path, { signal: controller.signal }).then(show, (err: unknown) => {
      if (controller.signal.aborted) return;
      if (err instanceof ApiRequestError && err.status === 404) show(null);
      else setErrors({ form: err instanceof Error ? err.message : String(err) });
    });
    return () => controller.abort();
  }, [path]);

  const submit = async (e: Event) => {
    e.preventDefault();
    const found: typeof errors = {};
    if (!/^https?:\/\//i.test(endpoint.trim())) found.endpoint = 'Enter the endpoint with http:// or https://, e.g. https://s3.eu-west-1.amazonaws.com.';
    if (bucket.trim() === '') found.bucket = 'Enter the bucket name.';
    if (keyId.trim() === '') found.access_key_id = current ? 'Enter the access key id again: it is never shown back.' : 'Enter the access key id.';
    if (secret === '') found.secret_access_key = current ? 'Enter the secret again: it is never shown back.' : 'Enter the secret access key.';
    setErrors(found);
    if (Object.keys(found).length > 0) return;
    const body = {
      endpoint: endpoint.trim(),
      bucket: bucket.trim(),
      ...(prefix.trim() ? { prefix: prefix.trim() } : {}),
      ...(region.trim() ? { region: region.trim() } : {}),
      access_key_id: keyId.trim(),
      secret_access_key: secret,
      path_style: pathStyle,
    };
    setBusy(true);
    try {
      show(await api<StorageDestination>(path, { method: 'PUT', body }));
      setKeyId('');
      setSecret('');
      onChanged(`Storage destination of ${account.email} saved.`);
    } catch (err) {
      const { field, message } = routeApiError(err, FIELDS);
      setErrors({ [field ?? 'form']: message });
    } finally {
      setBusy(false);
    }
  };

  const remove = async () => {
    setBusy(true);
    try {
      await api<void>(path, { method: 'DELETE' });
      setConfirmRemove(false);
      setCurrent(null);
      onChanged(`Storage destination of ${account.email} removed.`);
    } catch (err) {
      setErrors({ form: err instanceof Error ? err.message : String(err) });
    } finally {
      setBusy(false);
    }
  };

  return (
    <Modal title={`Storage destination of ${account.email}`} onClose={onClose} busy={busy}>
      <p>
        Requests of this account with <code>"upload": true</code> or a <code>storage_path</code> also put the image in this S3-compatible bucket. The
        endpoint is reached through the egress guard, like a page.
      </p>
      {current === undefined && !errors.form && <p class="loading">Loading…</p>}
      {current === null && <p class="notice" role="status">No storage destination: requests asking to upload get 400.</p>}
      {current && (
        <dl class="facts" aria-label="Current storage destination">
          <dt>Endpoint</dt>
          <dd class="break">{current.endpoint}</dd>
          <dt>Bucket</dt>
          <dd>{current.bucket}</dd>
          <dt>Prefix</dt>
          <dd>{current.prefix || '—'}</dd>
          <dt>Region</dt>
          <dd>{current.region}</dd>
          <dt>Addressing</dt>
          <dd>{current.path_style ? 'path-style' : 'virtual-hosted'}</dd>
          <dt>Access key id</dt>
          <dd>
            <code>{current.access_key_id}</code>
          </dd>
          <dt>Secret</dt>
          <dd>kept sealed, never shown</dd>
        </dl>
      )}
      {current !== undefined && (
        <form onSubmit={submit} noValidate aria-label={current ? 'Replace the storage destination' : 'Set a storage destination'}>
          <TextField label="Endpoint" type="url" value={endpoint} onInput={setEndpoint} error={errors.endpoint} required placeholder="https://s3.eu-west-1.amazonaws.com" />
          <div class="field-row">
            <TextField label="Bucket" value={bucket} onInput={setBucket} error={errors.bucket} required />
            <TextField label="Region" value={region} onInput={setRegion} error={errors.region} placeholder="us-east-1" />
          </div>
          <TextField label="Key prefix" value={prefix} onInput={setPrefix} error={errors.prefix} hint="Objects go under it; empty: the bucket's top." />
          <div class="field-row">
            <TextField label="Access key id" value={keyId} onInput={setKeyId} error={errors.access_key_id} required />
            <TextField label="Secret access key" type="password" value={secret} onInput={setSecret} error={errors.secret_access_key} required autoComplete="new-password" />
          </div>
          <CheckboxField label="Path-style addressing" checked={pathStyle} onChange={setPathStyle} error={errors.path_style} hint="MinIO, Ceph and most services but AWS expect it." />
          <FormFooter error={errors.form} busy={busy} onCancel={onClose} submitLabel={current ? 'Replace destination' : 'Save destination'} busyLabel="Saving…" />
        </form>
      )}
      {current && !confirmRemove && (
        <div class="dialog-actions">
          <button type="button" class="button danger-text" onClick={() => setConfirmRemove(true)} disabled={busy}>
            Remove destination…
          </button>
        </div>
      )}
      {current && confirmRemove && (
        <div class="confirm-inline" role="group" aria-label="Confirm removal">
          <p>Remove the destination? Requests asking to upload get 400 until a new one is set.</p>
          <div class="dialog-actions">
            <button type="button" class="button" onClick={() => setConfirmRemove(false)} disabled={busy}>
              Cancel
            </button>
            <button type="button" class="button danger" onClick={remove} disabled={busy}>
              Remove now
            </button>
          </div>
        </div>
      )}
    </Modal>
  );
}
