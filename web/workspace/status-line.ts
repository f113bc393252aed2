/**
 * The line under the Run button that says what happened: a run's progress and end, what was
 * opened, saved or downloaded, and why a request failed. A screen reader reads it (role
 * status). A request refused because the key is no longer accepted signs out instead.
 */

export class StatusLine {
  constructor(
    private readonly element: HTMLElement,
    private readonly session: { signedOutBy(error: unknown): boolean },
  ) {}

  announce(message: string, isError = false): void {
    this.element.textContent = message;
    this.element.classList.toggle('error', isError);
  }

  /** A request that failed: `what` could not be done, and the service's reason. */
  failed(error: unknown, what: string): void {
    if (this.session.signedOutBy(error)) return;
    this.announce(`${what}: ${error instanceof Error ? error.message : String(error)}`, true);
  }

  busy(running: boolean): void {
    this.element.classList.toggle('busy', running);
  }
}
