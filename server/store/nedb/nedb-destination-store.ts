import type { DestinationRecord } from '../records/destination-record.js';
import type { DestinationStore } from '../stores.js';
import type { NedbFile } from './nedb-file.js';

/** destinations.db: one document per account with a storage destination, its credentials sealed. */
export class NedbDestinationStore implements DestinationStore {
  constructor(private readonly db: NedbFile<DestinationRecord>) {}

  get(accountId: string): Promise<DestinationRecord | null> {
    return this.db.findOne({ _id: accountId });
  }

  async put(record: DestinationRecord): Promise<void> {
    await this.db.update({ _id: record._id }, record, { upsert: true });
  }

  async remove(accountId: string): Promise<boolean> {
    return (await this.db.remove({ _id: accountId }, {})) > 0;
  }
}
