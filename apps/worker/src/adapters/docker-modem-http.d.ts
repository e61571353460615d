// docker-modem's redirect-following HTTP wrapper (lib/http.js): only the setting the worker turns off.
declare module 'docker-modem/lib/http.js' {
  const http: { maxRedirects: number };
  export default http;
}
