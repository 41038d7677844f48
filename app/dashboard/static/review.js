// Review dashboard behaviour: keyboard shortcuts, queue selection, page switching. No dependencies
// besides htmx (which lazily loads span payloads); every action also works as a plain link or form.
(function () {
  "use strict";

  function typing(target) {
    return target instanceof HTMLElement &&
      (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
  }

  function go(selector) {
    const link = document.querySelector(selector);
    if (link && link.href) { window.location.assign(link.href); return true; }
    return false;
  }

  // --- Queue: j/k move a selection over the rows, Enter opens it. -----------------------------------
  function setupQueue() {
    const rows = Array.from(document.querySelectorAll(".queue-row"));
    if (!rows.length) { return null; }
    let index = -1;
    function select(next) {
      if (index >= 0) { rows[index].classList.remove("selected"); }
      index = Math.max(0, Math.min(rows.length - 1, next));
      rows[index].classList.add("selected");
      rows[index].scrollIntoView({ block: "nearest" });
    }
    rows.forEach(function (row, i) {
      row.addEventListener("click", function (event) {
        if (event.target.closest("a")) { return; }
        select(i);
        window.location.assign(row.dataset.href);
      });
    });
    select(0);
    return {
      next: function () { select(index + 1); },
      prev: function () { select(index - 1); },
      open: function () { if (index >= 0) { window.location.assign(rows[index].dataset.href); } },
    };
  }

  // --- Item: decisions from the keyboard. ----------------------------------------------------------
  function setupDecisions() {
    const form = document.querySelector("[data-decision-form]");
    if (!form) { return null; }
    const correction = form.querySelector("[data-correction]");
    const comment = form.querySelector("[data-comment]");
    let armed = null;

    function button(decision) { return form.querySelector('button[data-decision="' + decision + '"]'); }
    function arm(decision) {
      form.querySelectorAll("button.armed").forEach(function (b) { b.classList.remove("armed"); });
      armed = decision;
      if (decision) { button(decision).classList.add("armed"); }
    }
    function submit(decision) {
      arm(null);
      form.requestSubmit(button(decision));
    }
    // A click on "Correct" first opens the fields (its values start as the model's answer).
    button("correct").addEventListener("click", function (event) {
      if (correction && !correction.open) {
        event.preventDefault();
        correction.open = true;
        arm("correct");
        const first = form.querySelector("[data-first-field]");
        if (first) { first.focus(); first.select(); }
      }
    });
    form.addEventListener("keydown", function (event) {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        // Never guess a verdict: Ctrl+Enter sends the decision chosen with c or r (or an open correction).
        const decision = armed || (correction && correction.open ? "correct" : null);
        if (decision) { submit(decision); } else { comment.placeholder = "choose a decision first: a, c or r"; }
      }
    });
    return {
      approve: function () { submit("approve"); },
      correct: function () { button("correct").click(); arm("correct"); },
      reject: function () {
        arm("reject");
        comment.focus();
        comment.placeholder = "why is it rejected? then Ctrl+Enter";
      },
    };
  }

  // --- Item: the page image can step through the document. ------------------------------------------
  function setupPageImage() {
    const image = document.getElementById("page-image");
    if (!image) { return; }
    const label = document.querySelector("[data-page-label]");
    const frame = document.querySelector("[data-page-frame]");
    const count = parseInt(image.dataset.pageCount, 10);
    function show(page) {
      if (!(page >= 1 && page <= count)) { return; }
      image.dataset.page = String(page);
      image.src = image.dataset.srcBase + "?page=" + page;
      image.alt = "Page " + page;
      if (label) { label.textContent = String(page); }
    }
    document.querySelectorAll("[data-page-step]").forEach(function (b) {
      b.addEventListener("click", function () { show(parseInt(image.dataset.page, 10) + parseInt(b.dataset.pageStep, 10)); });
    });
    document.querySelectorAll("[data-page-go]").forEach(function (b) {
      b.addEventListener("click", function () { show(parseInt(b.dataset.pageGo, 10)); });
    });
    // Bring the first highlighted line into view inside the frame once the page is drawn.
    function focusHighlight() {
      const focus = parseFloat(image.dataset.focus);
      if (frame && !isNaN(focus) && image.dataset.page === image.getAttribute("src").split("page=")[1]) {
        frame.scrollTop = Math.max(0, focus * image.clientHeight - frame.clientHeight / 3);
      }
    }
    if (image.complete) { focusHighlight(); } else { image.addEventListener("load", focusHighlight, { once: true }); }
  }

  // --- Evidence links open the span they point to. ---------------------------------------------------
  function openTargetSpan() {
    const id = decodeURIComponent(window.location.hash.slice(1));
    const target = id && document.getElementById(id);
    if (target && target.tagName === "DETAILS") {
      target.open = true;
      target.scrollIntoView({ block: "center" });
    }
  }

  document.addEventListener("DOMContentLoaded", function () {
    const queue = setupQueue();
    const decide = setupDecisions();
    setupPageImage();
    openTargetSpan();
    window.addEventListener("hashchange", openTargetSpan);
    const help = document.getElementById("shortcuts");
    document.querySelectorAll("[data-help-toggle]").forEach(function (b) {
      b.addEventListener("click", function () { help.hidden = !help.hidden; });
    });

    document.addEventListener("keydown", function (event) {
      if (event.key === "Escape") {
        if (typing(document.activeElement)) { document.activeElement.blur(); }
        help.hidden = true;
        return;
      }
      if (typing(event.target) || event.ctrlKey || event.metaKey || event.altKey) { return; }
      const handled = (function () {
        switch (event.key) {
          case "j": return queue ? (queue.next(), true) : go('[data-nav="next"]');
          case "k": return queue ? (queue.prev(), true) : go('[data-nav="prev"]');
          case "Enter": return queue ? (queue.open(), true) : false;
          case "u": return go('[data-nav="queue"]');
          case "a": return decide ? (decide.approve(), true) : false;
          case "c": return decide ? (decide.correct(), true) : false;
          case "r": return decide ? (decide.reject(), true) : false;
          case "?": help.hidden = !help.hidden; return true;
          default: return false;
        }
      })();
      if (handled) { event.preventDefault(); }
    });
  });
})();
