# Rendered by wakebench report; run from this folder: gnuplot observed.gp
# Writes observed.png and observed.svg from observed.dat.
if (strstrt(GPVAL_TERMINALS, " pngcairo ") > 0) {
  set terminal pngcairo size 700,520 noenhanced font "sans,10"
} else {
  set terminal png size 700,520 noenhanced
}
set output 'observed.png'
set datafile missing 'NaN'
set title 'Where the kernel put the wakee (kernel placement cases)'
set xlabel 'case'
set ylabel 'round trips (%)'
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.6
set yrange [0:100]
set grid ytics
set key outside right top title 'wakee CPU vs waker CPU'
set xtics rotate by -30
plot for [col=2:3] 'observed.dat' using col:xtic(1) title columnheader(col)
set terminal svg size 700,520 noenhanced font "sans,10"
set output 'observed.svg'
replot
unset output
