/**
 * Tabs as the ARIA authoring practices describe them: the selected tab is the one Tab stop,
 * arrow keys (and Home, End) move between tabs and show their panel.
 */
export class Tabs {
  private readonly tabs: HTMLButtonElement[];

  constructor(
    tablist: HTMLElement,
    private readonly changed: (panelId: string) => void = () => {},
  ) {
    this.tabs = [...tablist.querySelectorAll<HTMLButtonElement>('[role="tab"]')];
    for (const tab of this.tabs) {
      tab.addEventListener('click', () => this.select(tab));
      tab.addEventListener('keydown', (event) => {
        const index = this.tabs.indexOf(tab);
        const last = this.tabs.length - 1;
        const target =
          event.key === 'ArrowRight'
            ? index === last
              ? 0
              : index + 1
            : event.key === 'ArrowLeft'
              ? index === 0
                ? last
                : index - 1
              : event.key === 'Home'
                ? 0
                : event.key === 'End'
                  ? last
                  : undefined;
        if (target === undefined) return;
        event.preventDefault();
        const next = this.tabs[target] as HTMLButtonElement;
        this.select(next);
        next.focus();
      });
    }
  }

  select(tab: HTMLButtonElement): void {
    for (const other of this.tabs) {
      const selected = other === tab;
      other.setAttribute('aria-selected', String(selected));
      other.tabIndex = selected ? 0 : -1;
      const panel = document.getElementById(other.getAttribute('aria-controls') ?? '');
      if (panel) panel.hidden = !selected;
    }
    this.changed(tab.getAttribute('aria-controls') ?? '');
  }

  selectPanel(panelId: string): void {
    const tab = this.tabs.find((t) => t.getAttribute('aria-controls') === panelId);
    if (tab) this.select(tab);
  }

  isSelected(panelId: string): boolean {
    return this.tabs.some(
      (t) => t.getAttribute('aria-controls') === panelId && t.getAttribute('aria-selected') === 'true',
    );
  }
}
