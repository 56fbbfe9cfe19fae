// The shape of the runtime settings, on its own and without imports: the control panel
// (renderer/src/admin-types.ts) uses this same type for what the admin API sends and takes.

/** Settings an admin can change while the service runs (admin API and control panel). */
export interface Settings {
  concurrency: number;
  queue_limit: number;
  navigation_timeout_ms: number;
  capture_timeout_ms: number;
  retention_days: number;
  full_page_max_height: number;
  /** Ranges the egress guard allows, as the admin saved them. */
  egress_allow: string[];
  /**
   * Ranges allowed at start by `--egress-allow` or SCREENSHOT_EGRESS_ALLOW: read-only here,
   * never saved, gone when the service starts without them. The guard allows both lists.
   */
  egress_allow_command_line: string[];
  egress_deny_lan: boolean;
  public_base_url: string | null;
}
