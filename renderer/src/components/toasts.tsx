import type { ComponentChildren } from 'preact';
import { createContext } from 'preact';
import { useCallback, useContext, useRef, useState } from 'preact/hooks';

type Kind = 'success' | 'error';
interface Toast {
  id: number;
  text: string;
  kind: Kind;
}

type Notify = (text: string, kind?: Kind) => void;
const ToastContext = createContext<Notify>(() => {});

/** Short confirmations ("Key revoked") read out by screen readers through a live region. */
export function ToastProvider({ children }: { children: ComponentChildren }) {
  const [toasts, setToasts] = useState<Toast[]>([]);
  const nextId = useRef(1);
  const notify = useCallback<Notify>((text, kind = 'success') => {
    const id = nextId.current++;
    setToasts((list) => [...list.slice(-2), { id, text, kind }]);
    setTimeout(() => setToasts((list) => list.filter((t) => t.id !== id)), kind === 'error' ? 8000 : 4000);
  }, []);
  return (
    <ToastContext.Provider value={notify}>
      {children}
      <div class="toasts" role="status" aria-live="polite">
        {toasts.map((t) => (
          <div key={t.id} class={`toast toast-${t.kind}`}>
            {t.text}
          </div>
        ))}
      </div>
    </ToastContext.Provider>
  );
}

export function useToast(): Notify {
  return useContext(ToastContext);
}
