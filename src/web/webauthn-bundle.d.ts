/** The browser bundle of @simplewebauthn/browser, embedded as text (src/web/passkey-script.ts). */
declare module '*/bundle/index.umd.min.js' {
  const text: string;
  export default text;
}
