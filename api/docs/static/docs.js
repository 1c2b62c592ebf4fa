// Starts Swagger UI on the page's element #swagger-ui with the service's own OpenAPI document
// (its URL is the element's data-spec). Nothing is fetched from another origin: the online
// validator badge is off. When the operations are drawn, <html data-ready="true"> tells tests.
(function () {
  "use strict";
  const root = document.getElementById("swagger-ui");
  window.ui = window.SwaggerUIBundle({
    url: root.dataset.spec,
    domNode: root,
    deepLinking: true,
    presets: [window.SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    validatorUrl: null,
    defaultModelsExpandDepth: 0,
    displayRequestDuration: true,
    onComplete: function () {
      document.documentElement.dataset.ready = "true";
    },
  });
})();
