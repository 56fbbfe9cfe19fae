import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef } from 'preact/hooks';

export interface ModalProps {
  title: string;
  /** Called when the dialog closes: Escape, the close button, or a form inside it. */
  onClose: () => void;
  children: ComponentChildren;
  wide?: boolean;
  /** Set while an action is running, so Escape does not drop its answer. */
  busy?: boolean;
}

const FOCUSABLE = 'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

/**
 * A modal dialog on the native <dialog>: the page behind it is inert, Escape closes it and focus
 * goes back to the control that opened it. Tab also wraps inside it, so keyboard users never
 * reach the browser chrome by accident. Mount it to open it; unmount or close it to close.
 */
export function Modal({ title, onClose, children, wide, busy }: ModalProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const onCloseRef = useRef(onClose);
  onCloseRef.current = onClose;
  const busyRef = useRef(busy);
  busyRef.current = busy;

  useEffect(() => {
    const dialog = ref.current!;
    const opener = document.activeElement as HTMLElement | null;
    dialog.showModal();
    const first = dialog.querySelector<HTMLElement>('[autofocus]') ?? dialog.querySelector<HTMLElement>(FOCUSABLE);
    first?.focus();
    return () => {
      if (dialog.open) dialog.close();
      // The dialog leaves the page with its parent; hand focus back to whoever opened it.
      if (opener?.isConnected) opener.focus();
    };
  }, []);

  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key !== 'Tab') return;
    const items = [...ref.current!.querySelectorAll<HTMLElement>(FOCUSABLE)].filter((el) => el.offsetParent !== null);
    if (items.length === 0) return;
    const first = items[0]!;
    const last = items[items.length - 1]!;
    if (e.shiftKey && document.activeElement === first) {
      e.preventDefault();
      last.focus();
    } else if (!e.shiftKey && document.activeElement === last) {
      e.preventDefault();
      first.focus();
    }
  };

  return (
    <dialog
      ref={ref}
      class={wide ? 'modal modal-wide' : 'modal'}
      aria-labelledby={titleId}
      onKeyDown={onKeyDown}
      onCancel={(e) => {
        e.preventDefault();
        if (!busyRef.current) onCloseRef.current();
      }}
    >
      <header class="modal-header">
        <h2 id={titleId}>{title}</h2>
        <button type="button" class="icon-button" aria-label="Close" disabled={busy} onClick={() => onCloseRef.current()}>
          ×
        </button>
      </header>
      <div class="modal-body">{children}</div>
    </dialog>
  );
}
