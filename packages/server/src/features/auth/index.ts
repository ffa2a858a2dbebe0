// The auth feature as other features may use it: everything else of it is its own.
export { resetTotp, withTotp } from './totp.service';
