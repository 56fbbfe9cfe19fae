import { SealedFiles } from './sealed-files.js';

/** The folder of the data directory holding the sealed secrets of monitors; never archived by `backup`. */
export const MONITOR_SECRETS_DIR = 'monitor-secrets';

/**
 * The NeDB backend's monitor secrets (and the options too large for a monitor's record): one
 * file per monitor in `<data>/monitor-secrets/` (SealedFiles), replaced whole and unlinked with
 * the monitor, so neither monitors.db nor memory holds them.
 */
export type MonitorSecretFiles = SealedFiles;

export function openMonitorSecretFiles(dataDir: string): Promise<MonitorSecretFiles> {
  return SealedFiles.open(dataDir, MONITOR_SECRETS_DIR, 'monitor');
}
