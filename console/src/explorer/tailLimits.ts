/** Live tail keeps at most this many rows on the explorer's page (the newest); older ones leave it. */
export const TAIL_KEEP = 500;
