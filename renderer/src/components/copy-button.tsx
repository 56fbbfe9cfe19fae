import { useEffect, useState } from 'preact/hooks';

/** Copies `text`; says "Copied" for a moment so the user knows it worked. */
export function CopyButton({ text, label = 'Copy', class: className = 'button' }: { text: string; label?: string; class?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  useEffect(() => {
    if (state === 'idle') return;
    const timer = setTimeout(() => setState('idle'), 2000);
    return () => clearTimeout(timer);
  }, [state]);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState('copied');
    } catch {
      // The clipboard API needs a secure context and permission; the text stays selectable.
      setState('failed');
    }
  };
  return (
    <button type="button" class={className} onClick={copy} aria-live="polite">
      {state === 'copied' ? 'Copied' : state === 'failed' ? 'Select and copy' : label}
    </button>
  );
}
