type OutgoingEmail = { to: string; subject: string; text: string; headers: Record<string, string> };

/** Hands one message to a mail server; rejects when the server did not accept it. */
export interface EmailSender {
  /** Where messages go, without credentials (for logs). */
  readonly target: string;
  send(message: OutgoingEmail): Promise<void>;
  close(): void;
}
