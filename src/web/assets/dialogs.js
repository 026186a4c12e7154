// Modal dialogs (<dialog>): a confirm that cannot be clicked through by
// accident, and forms that stay open to show the API's error.

/** Resolves true if the user pressed OK. */
export function confirmDialog(text, okLabel = 'OK') {
  const dialog = document.getElementById('confirm-dialog');
  document.getElementById('confirm-text').textContent = text;
  document.getElementById('confirm-ok').textContent = okLabel;
  dialog.returnValue = '';
  dialog.showModal();
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true });
  });
}

/**
 * Opens a form dialog; `submit(values)` runs on OK and may throw an error
 * whose message is shown in the dialog, which then stays open.
 */
export function formDialog(id, submit) {
  const dialog = document.getElementById(id);
  const form = dialog.querySelector('form');
  const error = form.querySelector('.error');
  form.reset();
  error.textContent = '';
  const onSubmit = async (event) => {
    if (event.submitter && event.submitter.value === 'cancel') return;
    event.preventDefault();
    const values = Object.fromEntries(new FormData(form).entries());
    try {
      await submit(values);
      dialog.close();
    } catch (e) {
      error.textContent = e.message;
    }
  };
  form.addEventListener('submit', onSubmit);
  dialog.addEventListener('close', () => form.removeEventListener('submit', onSubmit), { once: true });
  dialog.showModal();
  const first = form.querySelector('input');
  if (first) first.focus();
}
