/**
 * Errors: one class per `error.type` of the API (docs/api.md, "Errors"), each with the status,
 * `code`, `message`, `param`, `requestId` — and for a declined card its `declineCode` and the
 * failed payment's id.
 */

export interface ErrorFields {
  status?: number;
  type?: string;
  code?: string;
  param?: string;
  declineCode?: string;
  payment?: string;
  requestId?: string;
}

/** Any error answer of the API (or none, for {@link APIConnectionError}). */
export class TenderError extends Error {
  readonly status?: number;
  readonly type?: string;
  readonly code?: string;
  readonly param?: string;
  readonly declineCode?: string;
  /** The id of the failed payment a decline created (`pay_…`). */
  readonly payment?: string;
  readonly requestId?: string;

  constructor(message: string, fields: ErrorFields = {}) {
    super(message);
    this.name = new.target.name;
    Object.assign(this, fields);
  }

  /** Whether the same request may succeed if sent again with the same key. */
  get retryable(): boolean {
    return false;
  }
}

/** 400/404/405/408/413/415: a bad parameter, a bad state, an object that does not exist. */
export class InvalidRequestError extends TenderError {}
/** 402: the card was refused; `declineCode` says why, `payment` is the failed payment. */
export class CardError extends TenderError {}
/** 401: no valid API key. */
export class AuthenticationError extends TenderError {}
/** 403: a publishable key on a secret-key operation. */
export class PermissionDeniedError extends TenderError {}
/** 400: the key was used with another request; 409: the key's first request is running. */
export class IdempotencyError extends TenderError {
  override get retryable(): boolean {
    return this.status === 409;
  }
}
/** 429: too many requests; retried after `Retry-After`. */
export class RateLimitError extends TenderError {
  override get retryable(): boolean {
    return true;
  }
}
/** 5xx: the server failed, its processor did not answer, or its database is failing over. */
export class APIError extends TenderError {
  override get retryable(): boolean {
    return true;
  }
}
/** No HTTP answer at all (refused, reset, timed out) after every retry. */
export class APIConnectionError extends TenderError {}

const BY_TYPE: Record<string, new (message: string, fields: ErrorFields) => TenderError> = {
  invalid_request_error: InvalidRequestError,
  card_error: CardError,
  authentication_error: AuthenticationError,
  permission_error: PermissionDeniedError,
  idempotency_error: IdempotencyError,
  rate_limit_error: RateLimitError,
  api_error: APIError,
};

/** The error an answer carries (its JSON envelope, or a generic one by status). */
export function errorFrom(status: number, body: unknown): TenderError {
  const err = (body as { error?: Record<string, unknown> } | null)?.error;
  if (!err || typeof err !== "object") {
    const Cls = status >= 500 ? APIError : InvalidRequestError;
    return new Cls(`HTTP ${status} without an error body`, { status });
  }
  const str = (k: string): string | undefined => (typeof err[k] === "string" ? (err[k] as string) : undefined);
  const type = str("type");
  const Cls = (type && BY_TYPE[type]) || (status >= 500 ? APIError : TenderError);
  return new Cls(str("message") ?? "", {
    status,
    type,
    code: str("code"),
    param: str("param"),
    declineCode: str("decline_code"),
    payment: str("payment"),
    requestId: str("request_id"),
  });
}
