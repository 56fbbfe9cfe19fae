import { toApiError } from '../../server/api/error-responses.js';

/** Rejects with the answer the API gives the error (status, title, message, headers), for `.catch(answered)`. */
export const answered = (err: unknown): Promise<never> => Promise.reject(toApiError(err));
