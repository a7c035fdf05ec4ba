// Live updates of specd's web view (docs/web.md#live), from Server-Sent
// Events: an element with data-live="URL" takes the html of each "update"
// event; one with data-follow="URL" is emptied by "reset" and gets each
// "chunk" appended as text. "end" closes the stream, which the browser
// would otherwise open again.
"use strict";

document.querySelectorAll("[data-live]").forEach(function (el) {
  var es = new EventSource(el.dataset.live);
  es.addEventListener("update", function (e) {
    el.innerHTML = JSON.parse(e.data).html;
  });
  es.addEventListener("end", function () {
    es.close();
  });
});

document.querySelectorAll("[data-follow]").forEach(function (el) {
  var es = new EventSource(el.dataset.follow);
  function atBottom() {
    return window.innerHeight + window.scrollY >= document.body.scrollHeight - 8;
  }
  es.addEventListener("reset", function () {
    el.textContent = "";
  });
  es.addEventListener("chunk", function (e) {
    var follow = atBottom();
    el.append(JSON.parse(e.data));
    if (follow) {
      window.scrollTo(0, document.body.scrollHeight);
    }
  });
  es.addEventListener("end", function () {
    es.close();
    el.classList.add("ended");
  });
});
