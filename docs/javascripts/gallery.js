// The gallery's live players (runtime/app/gallery.py writes the links): a click on a
// "Play live" link opens its player page in an iframe under the link, and a second click closes
// it, so the gallery loads no player until asked. Without this script the link opens the page.
document.addEventListener("click", (event) => {
  const link = event.target.closest && event.target.closest("a.emberfx-play");
  if (!link || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey) return;
  event.preventDefault();
  const open = link.nextElementSibling;
  if (open && open.classList.contains("emberfx-player")) {
    open.remove();
    return;
  }
  const frame = document.createElement("iframe");
  frame.className = "emberfx-player";
  frame.src = link.href;
  frame.title = link.textContent;
  frame.width = link.dataset.width;
  frame.height = link.dataset.height;
  frame.style.cssText = "display: block; border: 0; max-width: 100%; margin-top: 0.5em";
  link.after(frame);
});
