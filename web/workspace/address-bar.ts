import { type Address, addressHash } from './address.js';

/** Puts `address` in the address bar without a new history entry or a hashchange. */
export function showAddress(address: Address | undefined): void {
  history.replaceState(null, '', addressHash(address) || location.pathname);
}
