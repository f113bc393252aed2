/**
 * Calls to the service's own API with the person's key, sent in a header (never in a URL,
 * where it would end up in history and logs). Every error answer is `{"error": "..."}`.
 */

export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** 401: the key is not (or no longer) accepted. */
export class KeyRejected extends ApiError {
  override name = 'KeyRejected';
}

export class Api {
  constructor(readonly key: string) {}

  private async send(
    method: string,
    path: string,
    body?: unknown,
    accept = 'application/json',
    type?: string,
  ) {
    const headers: Record<string, string> = { 'X-Service-Api-Key': this.key, Accept: accept };
    if (body !== undefined) headers['Content-Type'] = type ?? 'application/json';
    const response = await fetch(path, {
      method,
      headers,
      // A file goes as it is: the browser streams it from disk.
      body: body === undefined ? undefined : body instanceof Blob ? body : JSON.stringify(body),
      cache: 'no-store',
      credentials: 'omit',
    });
    if (!response.ok) {
      let message = `HTTP ${response.status}`;
      try {
        const answer = (await response.json()) as { error?: unknown };
        if (typeof answer.error === 'string') message = answer.error;
      } catch {
        // Not JSON: the status says enough.
      }
      if (response.status === 401) throw new KeyRejected(401, message);
      throw new ApiError(response.status, message);
    }
    return response;
  }

  async get<T>(path: string): Promise<T> {
    return (await (await this.send('GET', path)).json()) as T;
  }

  /** As get, with the moment the answer began to arrive (performance.now()), for timings. */
  async getTimed<T>(path: string): Promise<{ value: T; arrivedAt: number }> {
    const response = await this.send('GET', path);
    const arrivedAt = performance.now();
    return { value: (await response.json()) as T, arrivedAt };
  }

  async post<T>(path: string, body?: unknown): Promise<T> {
    return (await (await this.send('POST', path, body ?? {})).json()) as T;
  }

  /** POSTs a file as the body, with its content type. */
  async postFile<T>(path: string, file: Blob, type: string): Promise<T> {
    return (await (await this.send('POST', path, file, 'application/json', type)).json()) as T;
  }

  async patch<T>(path: string, body: unknown): Promise<T> {
    return (await (await this.send('PATCH', path, body)).json()) as T;
  }

  async delete<T>(path: string): Promise<T> {
    return (await (await this.send('DELETE', path)).json()) as T;
  }

  /** A whole answer as a file, for downloads (held in memory by the browser until saved). */
  async file(path: string, accept: string): Promise<Blob> {
    return (await this.send('GET', path, undefined, accept)).blob();
  }
}
