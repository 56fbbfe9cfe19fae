/**
 * What a monitor of a test that is not about proposed masks says: take the first baseline once.
 * A new monitor captures it twice by default, the second capture 2 s after the first, which
 * would cost each such test a capture and add a check it does not expect.
 */
export const NO_PROPOSED_MASKS = { propose_masks: false } as const;
