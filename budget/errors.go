package budget

import "errors"

// ErrInvalidOptions is matched (errors.Is) by every error that reports bad
// arguments: a negative Budget, a DutyCycle outside [0, 1], Yield together
// with DutyCycle, a negative item count or a nil func.
var ErrInvalidOptions = errors.New("budget: invalid options")
