/** A new bot login code and the secret its poller proves itself with. */
export interface LoginCode {
  code: string;
  pollSecret: string;
  /** The bot's `login_<code>` link; null when no bot is configured. */
  deepLink: string | null;
  expiresAt: Date;
}

/** A poll's answer; `bootstrapToken` is handed out once, with `confirmed`. */
export interface LoginCodePoll {
  status: 'pending' | 'confirmed' | 'expired';
  bootstrapToken?: string;
}
