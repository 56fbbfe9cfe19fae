import type { StorageDestination, StorageDestinationPut } from '../contract/storage.js';
import type { SecretBox } from '../crypto/secret-box.js';
import { NotFoundError, ValidationError } from '../domain-errors.js';
import type { DestinationRecord } from '../store/records/destination-record.js';
import type { AccountStore, DestinationStore } from '../store/stores.js';
import { type Clock, formatIsoSeconds } from '../time.js';
import { checkBucket, checkEndpoint, checkPrefix, maskedKeyId } from './destination-rules.js';

/** The credentials of a destination, as they are sealed in its record. */
export interface DestinationCredentials {
  access_key_id: string;
  secret_access_key: string;
}

/** A destination ready to upload to: its record and its credentials, opened. */
export interface OpenDestination {
  record: DestinationRecord;
  credentials: DestinationCredentials;
}

export interface StorageDestinationsDeps {
  store: DestinationStore;
  accounts: AccountStore;
  /** Seals the credentials (the key that seals job secrets). */
  secrets: SecretBox;
  clock: Clock;
}

/**
 * The accounts' storage destinations (the customer's own bucket): set, shown without the
 * secret, removed, and opened for an upload. The credentials are sealed as one value in the
 * record; only a masked access key id is kept in clear, and nothing here logs.
 */
export class StorageDestinations {
  constructor(private readonly deps: StorageDestinationsDeps) {}

  /** Sets the account's destination (replacing any); ValidationError naming the field, NotFoundError for no such account. */
  async put(accountId: string, input: StorageDestinationPut): Promise<StorageDestination> {
    await this.account(accountId);
    const record: DestinationRecord = {
      _id: accountId,
      endpoint: checkEndpoint(input.endpoint),
      bucket: checkBucket(input.bucket),
      prefix: checkPrefix(input.prefix),
      region: input.region ?? 'us-east-1',
      path_style: input.path_style ?? false,
      access_key_hint: maskedKeyId(input.access_key_id),
      sealed_credentials: this.deps.secrets.seal({ access_key_id: input.access_key_id, secret_access_key: input.secret_access_key } satisfies DestinationCredentials),
      updated_at: this.deps.clock.now(),
    };
    await this.deps.store.put(record);
    return destinationView(record);
  }

  /** The account's destination without its secret; NotFoundError when the account or its destination is not there. */
  async view(accountId: string): Promise<StorageDestination> {
    await this.account(accountId);
    const record = await this.deps.store.get(accountId);
    if (!record) throw new NotFoundError('storage destination for account', accountId);
    return destinationView(record);
  }

  /** Removes the account's destination; NotFoundError when there is none. */
  async remove(accountId: string): Promise<void> {
    await this.account(accountId);
    if (!(await this.deps.store.remove(accountId))) throw new NotFoundError('storage destination for account', accountId);
  }

  /** Removes the destination of an account being deleted, if it had one. */
  async forget(accountId: string): Promise<void> {
    await this.deps.store.remove(accountId);
  }

  /** A request asking for an upload: refused (400 naming `upload`) when the account has no destination. */
  async requireFor(accountId: string): Promise<void> {
    if (!(await this.deps.store.get(accountId))) {
      throw new ValidationError(
        'upload (or storage_path) needs a storage destination for this account, and it has none; the admin sets one in the control panel or with PUT /admin/api/accounts/{id}/storage',
        'upload',
      );
    }
  }

  /** The account's destination with its credentials opened, or null when it has none; throws when they cannot be opened. */
  async open(accountId: string): Promise<OpenDestination | null> {
    const record = await this.deps.store.get(accountId);
    if (!record) return null;
    return { record, credentials: this.deps.secrets.open<DestinationCredentials>(record.sealed_credentials) };
  }

  private async account(accountId: string): Promise<void> {
    if (!(await this.deps.accounts.get(accountId))) throw new NotFoundError('account', accountId);
  }
}

/** A destination as the admin API shows it: everything but the secret, the access key id masked. */
export function destinationView(record: DestinationRecord): StorageDestination {
  return {
    account_id: record._id,
    endpoint: record.endpoint,
    bucket: record.bucket,
    prefix: record.prefix,
    region: record.region,
    path_style: record.path_style,
    access_key_id: record.access_key_hint,
    updated_at: formatIsoSeconds(record.updated_at),
  };
}
