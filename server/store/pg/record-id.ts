import crypto from 'node:crypto';

/**
 * A new id for a record the store names (accounts, keys): 16 random letters and digits, the form
 * NeDB gives its documents, so ids look alike whichever backend made them and an imported
 * NeDB id needs no translation.
 */
export function newRecordId(): string {
  for (;;) {
    const id = crypto.randomBytes(24).toString('base64').replace(/[+/]/g, '').slice(0, 16);
    if (id.length === 16) return id;
  }
}
