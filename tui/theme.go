package tui

import (
	"image/color"

	"charm.land/lipgloss/v2"
)

// Level is how good a number is against its threshold.
type Level int

const (
	LevelNone Level = iota // no judgement (missing, or no threshold)
	LevelOK
	LevelWarn
	LevelCrit
)

// Palette is the semantic colour set. ANSI-256 indexes survive tmux and
// screen, which do not all pass truecolour through.
type Palette struct {
	OK, Warn, Crit, Faint, Border, Focus, Accent, Title, Highlight color.Color
}

// palette picks colours readable on a dark or a light background.
func palette(isDark bool) Palette {
	ld := lipgloss.LightDark(isDark)
	c := lipgloss.Color
	return Palette{
		OK:        ld(c("28"), c("78")),
		Warn:      ld(c("130"), c("214")),
		Crit:      ld(c("160"), c("203")),
		Faint:     ld(c("243"), c("245")),
		Border:    ld(c("250"), c("239")),
		Focus:     ld(c("25"), c("75")),
		Accent:    ld(c("25"), c("117")),
		Title:     ld(c("235"), c("255")),
		Highlight: ld(c("223"), c("94")),
	}
}

// Styles are the lipgloss styles every pane draws with, built once from a
// Palette. With colour off every style is plain (bold and reverse stay, so
// badges and the focused pane remain visible).
type Styles struct {
	NoColor bool
	Dark    bool

	OK, Warn, Crit, Faint, Accent, Title, Bold Ink
	// Border and FocusBorder colour the pane edges.
	Border, FocusBorder                      Ink
	Highlight                                Ink
	BadgeOK, BadgeWarn, BadgeCrit, BadgeInfo Ink
	Palette                                  Palette
}

// NewStyles builds the theme. isDark selects the palette; noColor drops
// every colour (NO_COLOR, --no-color, theme = "mono").
func NewStyles(isDark, noColor bool) *Styles {
	p := palette(isDark)
	s := &Styles{NoColor: noColor, Dark: isDark, Palette: p}
	fg := func(c color.Color) lipgloss.Style {
		if noColor {
			return lipgloss.NewStyle()
		}
		return lipgloss.NewStyle().Foreground(c)
	}
	s.OK, s.Warn, s.Crit, s.Faint, s.Accent = inked(fg(p.OK)), inked(fg(p.Warn).Bold(true)), inked(fg(p.Crit).Bold(true)), inked(fg(p.Faint)), inked(fg(p.Accent))
	s.Title = inked(fg(p.Title).Bold(true))
	s.Bold = inked(lipgloss.NewStyle().Bold(true))
	s.Border, s.FocusBorder = inked(fg(p.Border)), inked(fg(p.Focus))
	badge := func(c color.Color) lipgloss.Style {
		if noColor {
			return lipgloss.NewStyle().Bold(true)
		}
		return lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("16")).Background(c)
	}
	s.BadgeOK, s.BadgeWarn, s.BadgeCrit, s.BadgeInfo = inked(badge(p.OK)), inked(badge(p.Warn)), inked(badge(p.Crit)), inked(badge(p.Accent))
	if noColor {
		s.Highlight = inked(lipgloss.NewStyle().Reverse(true))
	} else {
		s.Highlight = inked(lipgloss.NewStyle().Background(p.Highlight))
	}
	return s
}

// Level returns the style for a judgement.
func (s *Styles) Level(l Level) Ink {
	switch l {
	case LevelOK:
		return s.OK
	case LevelWarn:
		return s.Warn
	case LevelCrit:
		return s.Crit
	default:
		return plainInk
	}
}

// Badge returns the style for a level's badge.
func (s *Styles) Badge(l Level) Ink {
	switch l {
	case LevelOK:
		return s.BadgeOK
	case LevelWarn:
		return s.BadgeWarn
	case LevelCrit:
		return s.BadgeCrit
	default:
		return s.BadgeInfo
	}
}
