// Starts Swagger UI on /docs from a file, so the page needs no inline script (CSP script-src 'self').
// validatorUrl null: Swagger UI would otherwise load a badge from validator.swagger.io (the page is offline).
// Loaded by docs.html as a classic script; no module imports it.
window.ui = SwaggerUIBundle({
  url: "openapi.json",
  dom_id: "#swagger-ui",
  validatorUrl: null,
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis],
  layout: "BaseLayout",
});
