import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';

interface Common {
  label: string;
  /** Shown under the field while there is no error. */
  hint?: ComponentChildren;
  /** Shown under the field, tied to it with aria-describedby and aria-invalid. */
  error?: string | null;
}

function Describe({ id, hint, error }: { id: string; hint?: ComponentChildren; error?: string | null }) {
  if (error) {
    return (
      <p id={id} class="field-error" role="alert">
        {error}
      </p>
    );
  }
  return hint ? (
    <p id={id} class="field-hint">
      {hint}
    </p>
  ) : null;
}

export interface TextFieldProps extends Common {
  value: string;
  onInput: (value: string) => void;
  type?: 'text' | 'email' | 'number' | 'url' | 'password';
  name?: string;
  required?: boolean;
  placeholder?: string;
  min?: number;
  max?: number;
  step?: number | 'any';
  /** A unit shown after the value (the label names it too, for screen readers). */
  unit?: string;
  autoFocus?: boolean;
  autoComplete?: string;
}

export function TextField({ label, hint, error, value, onInput, type = 'text', unit, autoFocus, autoComplete = 'off', ...rest }: TextFieldProps) {
  const id = useId();
  const describedBy = error || hint ? `${id}-d` : undefined;
  const input = (
    <input
      id={id}
      // Preact's typings split <input> by type; this component accepts only text-like types.
      type={type as 'text'}
      value={value}
      onInput={(e) => onInput(e.currentTarget.value)}
      aria-invalid={error ? 'true' : undefined}
      aria-describedby={describedBy}
      autofocus={autoFocus}
      autoComplete={autoComplete}
      spellcheck={false}
      {...rest}
    />
  );
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {unit ? (
        <div class="input-unit">
          {input}
          <span aria-hidden="true">{unit}</span>
        </div>
      ) : (
        input
      )}
      <Describe id={`${id}-d`} hint={hint} error={error} />
    </div>
  );
}

export interface SelectFieldProps<V extends string> extends Common {
  value: V;
  onChange: (value: V) => void;
  options: readonly { value: V; label: string }[];
  name?: string;
}

export function SelectField<V extends string>({ label, hint, error, value, onChange, options, name }: SelectFieldProps<V>) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select
        id={id}
        name={name}
        value={value}
        onChange={(e) => onChange(e.currentTarget.value as V)}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={error || hint ? `${id}-d` : undefined}
      >
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
      <Describe id={`${id}-d`} hint={hint} error={error} />
    </div>
  );
}

export interface CheckboxFieldProps extends Common {
  checked: boolean;
  onChange: (checked: boolean) => void;
  name?: string;
}

export function CheckboxField({ label, hint, error, checked, onChange, name }: CheckboxFieldProps) {
  const id = useId();
  return (
    <div class="field field-checkbox">
      <input
        id={id}
        type="checkbox"
        name={name}
        checked={checked}
        onChange={(e) => onChange(e.currentTarget.checked)}
        aria-describedby={error || hint ? `${id}-d` : undefined}
      />
      <label for={id}>{label}</label>
      <Describe id={`${id}-d`} hint={hint} error={error} />
    </div>
  );
}
