// Requests to this service's API. Every failure arrives in the API's one error shape
// {code, status, message, errors: [{path, message}]} and is thrown as an ApiError.

const KEY = "costmodel.apiKey";

export class ApiError extends Error {
  constructor(status, body) {
    super(body.message || `HTTP ${status}`);
    this.name = "ApiError";
    this.status = status;
    this.errors = Array.isArray(body.errors) ? body.errors : [];
  }
}

/** Fires "unauthorised" (detail: the ApiError) whenever the API answers 401. */
export const auth = new EventTarget();

export function apiKey() {
  try {
    return sessionStorage.getItem(KEY) || "";
  } catch {
    return "";
  }
}

export function setApiKey(key) {
  try {
    if (key) sessionStorage.setItem(KEY, key);
    else sessionStorage.removeItem(KEY);
  } catch {
    // storage refused (private mode): the key lives only in the input
  }
}

async function failure(response) {
  let body;
  try {
    body = await response.json();
  } catch {
    body = { message: `${response.status} ${response.statusText}`, errors: [] };
  }
  const error = new ApiError(response.status, body);
  if (response.status === 401)
    auth.dispatchEvent(new CustomEvent("unauthorised", { detail: error }));
  return error;
}

/**
 * Call the API at `path` (same origin). `body` is sent as JSON; the answer is parsed as JSON
 * unless `raw`, when the Response itself is returned. Throws ApiError, or an AbortError when
 * `signal` aborts.
 */
export async function api(path, { method = "GET", body, signal, raw = false } = {}) {
  const headers = { Accept: raw ? "*/*" : "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const key = apiKey();
  if (key) headers.Authorization = `Bearer ${key}`;
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
    credentials: "same-origin",
    cache: "no-store",
  });
  if (!response.ok) throw await failure(response);
  return raw ? response : response.json();
}

/** Where a document of `kind` is evaluated. */
export const ENDPOINTS = { scenario: "/v1/evaluate", plan: "/v1/plans" };
